import { expect } from 'vitest';
import type { Database } from '../../src/db/database.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, by type. */
export function planNodes(node: PlanNode): string[] {
  return [node['Node Type'], ...(node.Plans ?? []).flatMap(planNodes)];
}

/** Every scan of a plan, as its node type and relation (`Seq Scan api_keys`). */
export function planScans(node: PlanNode): string[] {
  const own = node['Node Type'].endsWith('Scan')
    ? [`${node['Node Type']} ${node['Relation Name'] ?? ''}`]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap(planScans)];
}

/**
 * The plan PostgreSQL keeps for a prepared statement (the generic plan, parameters unknown): `text`
 * prepared with parameters of `types`, explained for `values` (SQL literals). Nothing is run.
 */
export async function genericPlan(
  db: Database,
  text: string,
  types: string[],
  values: string[],
): Promise<PlanNode> {
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
  return top?.Plan as PlanNode;
}

/** The scans of a statement's generic plan (genericPlan), each as its node type and relation. */
export async function genericPlanScans(
  db: Database,
  text: string,
  types: string[],
  values: string[],
): Promise<string[]> {
  return planScans(await genericPlan(db, text, types, values));
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
