import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TEMPLATES } from '../../src/markets/demo/demo-templates.js';
import { databaseEnv, runCliOn, runCli as runProcess } from '../helpers/cli.js';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

let database: TestDatabase;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'sibyl-markets-cli-'));

/** A command run in this process on the test's open database (see runCliOn). */
const runCli = (args: string[], commandEnv: Record<string, string>) =>
  runCliOn(database.db, args, commandEnv);

async function json(args: string[]) {
  const result = await runCli([...args, '--json'], env);
  const lines = result.stdout.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1); // exactly one JSON object on stdout
  return { status: result.status, body: JSON.parse(lines[0] as string) };
}

/** Runs a query on the test database, which the in-process commands share. */
async function query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
  return database.db.query<R>(sql, params);
}

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 2 });
  env = databaseEnv(database.location);
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sibyl markets', () => {
  it('ingest FILE applies a file, reports bad lines by number, and exits 1 when any was refused', async () => {
    const file = join(dir, 'events.ndjson');
    writeFileSync(
      file,
      `${ndjson([
        marketCreated({ id: 'cli-m1', outcomes: ['Up', 'Down'] }, { id: 'cli-e1' }),
        event(
          'stake',
          '2026-03-01T12:00:00Z',
          { marketId: 'cli-m1', wallet: wallet('c'), amount: '5' },
          'cli-e2',
        ),
      ])}not json\n`,
    );
    const first = await json(['markets', 'ingest', file]);
    expect(first).toEqual({
      status: 1,
      body: {
        file,
        received: 3,
        applied: 2,
        skipped: 0,
        refused: 1,
        reports: [
          {
            line: 3,
            eventId: null,
            outcome: 'refused',
            reason: 'invalid',
            message: 'event is not valid JSON',
            problems: [{ path: 'event', message: 'is not valid JSON' }],
          },
        ],
        reportsTruncated: false,
      },
    });
    const good = join(dir, 'good.ndjson');
    writeFileSync(
      good,
      ndjson([marketCreated({ id: 'cli-m1', outcomes: ['Up', 'Down'] }, { id: 'cli-e1' })]),
    );
    expect(await json(['markets', 'ingest', good])).toMatchObject({
      status: 0,
      body: { applied: 0, skipped: 1 },
    });
    expect(await json(['markets', 'ingest', join(dir, 'missing.ndjson')])).toMatchObject({
      status: 2,
      body: { code: 'USAGE' },
    });
  });

  it('resolve MARKET_ID OUTCOME finalizes by index or label and records it', async () => {
    const resolved = await json(['markets', 'resolve', 'cli-m1', 'Down']);
    expect(resolved).toEqual({
      status: 0,
      body: {
        marketId: 'cli-m1',
        status: 'FINALIZED',
        winningOutcomeIndex: 1,
        winningOutcomeLabel: 'Down',
        resolvedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    });
    const [row] = await query<{ status: string; winning_outcome_index: number; resolution_details: unknown }>(
      'SELECT status, winning_outcome_index, resolution_details FROM markets WHERE id = $1',
      ['cli-m1'],
    );
    expect(row).toEqual({
      status: 'FINALIZED',
      winning_outcome_index: 1,
      resolution_details: {
        resolvedBy: 'admin',
        outcomeLabel: 'Down',
        transitions: [
          {
            from: 'OPEN',
            to: 'FINALIZED',
            at: resolved.body.resolvedAt,
            by: 'admin',
            eventId: expect.stringMatching(/^admin:/),
          },
        ],
      },
    });
    // Already final; an unknown market; an outcome the market does not have.
    expect((await json(['markets', 'resolve', 'cli-m1', '0'])).body).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect(await json(['markets', 'resolve', 'nope', '0'])).toEqual({
      status: 1,
      body: { error: 'Market nope not found', code: 'NOT_FOUND' },
    });
    await json(['markets', 'ingest', join(dir, 'events.ndjson')]);
    const other = join(dir, 'other.ndjson');
    writeFileSync(other, ndjson([marketCreated({ id: 'cli-m2' })]));
    await json(['markets', 'ingest', other]);
    const badOutcome = await json(['markets', 'resolve', 'cli-m2', '2']);
    expect(badOutcome.body.code).toBe('VALIDATION_ERROR');
    expect(badOutcome.body.details.problems[0].message).toContain('Yes, No');
    expect((await json(['markets', 'resolve', 'cli-m2', '0'])).body).toMatchObject({
      winningOutcomeLabel: 'Yes',
    });
  });

  it('demo loads a few dozen sandbox markets of every status and resolution type once', async () => {
    const demo = await json(['markets', 'demo']);
    expect(demo.status).toBe(0);
    expect(demo.body).toMatchObject({ seed: 1, markets: DEMO_TEMPLATES.length, alreadyLoaded: false });
    expect(demo.body.ingestion).toMatchObject({ refused: 0, skipped: 0 });
    expect(demo.body.ingestion.applied).toBeGreaterThan(1000);

    const markets = await query<{ status: string; resolution_type: string; sandbox: boolean }>(
      `SELECT status, resolution_type, sandbox FROM markets WHERE id LIKE 'demo-1-%'`,
    );
    expect(markets.length).toBeGreaterThanOrEqual(30);
    expect(markets.every((m) => m.sandbox)).toBe(true);
    expect(new Set(markets.map((m) => m.status))).toEqual(
      new Set(['DRAFT', 'OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED']),
    );
    expect(new Set(markets.map((m) => m.resolution_type))).toEqual(
      new Set(['PRICE_FEED', 'AI', 'ADMIN', 'MANUAL_VOTE']),
    );
    const [activity] = await query<Record<string, bigint>>(
      `SELECT (SELECT count(*) FROM market_orders WHERE market_id LIKE 'demo-1-%' AND open_shares > 0) AS open_orders,
              (SELECT count(*) FROM market_trades WHERE market_id LIKE 'demo-1-%') AS trades,
              (SELECT count(*) FROM market_positions WHERE market_id LIKE 'demo-1-%') AS positions,
              (SELECT count(*) FROM market_stakes WHERE market_id LIKE 'demo-1-%') AS stakes`,
    );
    for (const n of Object.values(activity ?? {})) expect(n).toBeGreaterThan(50n);

    expect(await json(['markets', 'demo'])).toMatchObject({
      status: 0,
      body: { alreadyLoaded: true, ingestion: null },
    });
    expect((await json(['markets', 'demo', '--seed', 'x'])).body.code).toBe('USAGE');
  });
});

describe('sibyl markets as a process', { timeout: 120_000 }, () => {
  it('ingest reads the file, prints one JSON report and exits 1 when a line was refused', () => {
    // A database of its own: the embedded one admits one process at a time, and this file holds its own.
    const location = usingPostgres ? database.location : copyPgliteTemplate();
    const file = join(dir, 'process.ndjson');
    writeFileSync(
      file,
      `${ndjson([marketCreated({ id: 'cli-p1', outcomes: ['Up', 'Down'] }, { id: 'cli-p1-e1' })])}not json\n`,
    );
    const result = runProcess(['markets', 'ingest', file, '--json'], databaseEnv(location));
    expect(result.status, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ file, received: 2, applied: 1, refused: 1 });
    if (!usingPostgres) rmSync(dirname(location), { recursive: true, force: true });
  });
});
