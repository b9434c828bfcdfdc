import { expect } from 'vitest';
import type { Database } from '../../src/db/database.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode): string[] {
  const own = node['Node Type'].endsWith('Scan')
    ? [`${node['Node Type']} ${node['Relation Name'] ?? ''}`]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap(scans)];
}

/**
 * The scans of the plan PostgreSQL keeps for a prepared statement (the generic plan, parameters
 * unknown): `text` prepared with parameters of `types`, explained for `values` (SQL literals), each
 * scan as its node type and relation (`Seq Scan api_keys`). Nothing is run.
 */
export async function genericPlanScans(
  db: Database,
  text: string,
  types: string[],
  values: string[],
): Promise<string[]> {
  const plan = await db.transaction(async (tx) => {
    await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.query(`PREPARE plan_of (${types.join(', ')}) AS ${text}`);
    const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) EXECUTE plan_of (${values.join(', ')})`,
    );
    await tx.query('DEALLOCATE plan_of');
    return row?.['QUERY PLAN'];
  });
  const [top] = (typeof plan === 'string' ? JSON.parse(plan) : plan) as { Plan: PlanNode }[];
  return scans(top?.Plan as PlanNode);
}

/** `found` (genericPlanScans) reads `relation`, and only by an index, never by a sequential scan. */
export function expectReadByIndex(found: string[], relation: string): void {
  const of = found.filter((scan) => scan.endsWith(` ${relation}`));
  const message = `the plan's scans: ${found.join(', ')}`;
  expect(of, message).not.toEqual([]);
  expect(
    of.filter((scan) => !/^(Index Scan|Index Only Scan|Bitmap Heap Scan) /.test(scan)),
    message,
  ).toEqual([]);
}
