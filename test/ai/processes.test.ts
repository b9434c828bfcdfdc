import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type FakeLlm, fakeSlotsEnv, startFakeLlm } from './fake-llm.js';
import { callbacksOf, createCallbackTable, question, submit } from './helpers.js';

/**
 * Real `sibyl work` processes on PostgreSQL: two workers racing over the same requests resolve
 * each once and refund each FAILED one once; a worker killed with SIGKILL mid-resolution leaves its
 * request to another, which asks only the model that had not answered and completes it once, with
 * one callback row in the webhook outbox.
 */

function startWorker(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [BIN, 'work'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, output: () => output };
}

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

async function until(what: string, condition: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(usingPostgres)('AI workers as real processes on PostgreSQL', () => {
  let database: TestDatabase;
  let fakes: FakeLlm[];
  let ctx: TestContext;
  const workers: ChildProcess[] = [];
  let slotsEnv: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    await createCallbackTable(database.db);
    fakes = await Promise.all(
      (['openai', 'anthropic', 'google', 'xai'] as const).map((kind) => startFakeLlm(kind)),
    );
    // No tools: each model answers in one call, so the calls each fake saw count the models asked.
    slotsEnv = fakeSlotsEnv(fakes, { AI_DEADLINE_MS: '4000', AI_LEASE_MS: '5000', AI_MAX_TOOL_CALLS: '0' });
    ctx = await createTestContext({ database, config: slotsEnv });
  });
  afterAll(async () => {
    for (const worker of workers) await stop(worker, 'SIGKILL');
    await ctx?.close();
    for (const fake of fakes ?? []) await fake.close();
    await database?.close();
  });

  async function statusOf(requestId: string): Promise<string | undefined> {
    const [row] = await database.db.query<{ status: string }>(
      'SELECT status FROM ai_requests WHERE id = $1',
      [requestId],
    );
    return row?.status;
  }

  it('two racing workers: each request resolved once, each FAILED one refunded once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '50.00' });
    const a = startWorker({ DATABASE_URL: database.location, AI_WORKER_CONCURRENCY: '8' });
    const b = startWorker({ DATABASE_URL: database.location, AI_WORKER_CONCURRENCY: '8' });
    workers.push(a.child, b.child);
    const contexts = [
      '[sandbox:votes=0,0,x,x][sandbox:delay=30]',
      '[sandbox:votes=1,1,1,x]',
      '[sandbox:delay=10]',
    ];
    const ids: string[] = [];
    for (let i = 0; i < 90; i++) {
      const response = await submit(ctx, account.key, question({ context: contexts[i % 3] }));
      expect(response.statusCode).toBe(200);
      ids.push(response.json().requestId);
    }
    const output = () => a.output() + b.output();
    await until(
      'every request to finish',
      async () => {
        const [row] = await database.db.query<{ n: bigint }>(
          `SELECT count(*) AS n FROM ai_requests WHERE id = ANY($1) AND status IN ('COMPLETED', 'FAILED')`,
          [ids],
        );
        return row?.n === 90n;
      },
      output,
    );
    await Promise.all([stop(a.child), stop(b.child)]);
    const refunds = await database.db.query<{ request_id: string; refunds: bigint }>(
      `SELECT r.id AS request_id, count(l.id) AS refunds
         FROM ai_requests r LEFT JOIN ledger_entries l ON l.refund_of = r.charge_entry_id
        WHERE r.id = ANY($1) GROUP BY r.id, r.status ORDER BY r.id`,
      [ids],
    );
    const failed = new Set(ids.filter((_, i) => i % 3 === 0));
    for (const row of refunds) expect(row.refunds).toBe(failed.has(row.request_id) ? 1n : 0n);
    expect(await countEntries(database.db, account.accountId, 'refund')).toBe(30);
    const callbacks = await database.db.query<{ request_id: string; n: bigint }>(
      'SELECT request_id, count(*) AS n FROM test_recorded_callbacks WHERE request_id = ANY($1) GROUP BY request_id',
      [ids],
    );
    expect(callbacks).toHaveLength(90);
    expect(callbacks.every((c) => c.n === 1n)).toBe(true);
    await expectLedgerReconciles(database.db);
  });

  it('a worker killed with SIGKILL mid-resolution: another completes the request once, asking only the missing model', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    // The fourth provider never answers the first worker; it answers the second at once.
    const fourth = fakes[3] as FakeLlm;
    fourth.setReply((_request, call) =>
      call === 1
        ? { hangMs: 60_000 }
        : { answer: { outcomeIndex: 0, confidence: 0.95, reasoning: 'Late but sure.' } },
    );
    for (const fake of fakes.slice(0, 3)) {
      fake.setReply(() => ({ answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'Yes.' } }));
    }
    const before = fakes.map((f) => f.server.requests.length);
    const first = startWorker({ DATABASE_URL: database.location, ...slotsEnv });
    workers.push(first.child);
    const requestId = (await submit(ctx, account.key, question())).json().requestId as string;
    await until(
      'three stored answers',
      async () => {
        const [row] = await database.db.query<{ n: bigint }>(
          'SELECT count(*) AS n FROM ai_votes WHERE request_id = $1',
          [requestId],
        );
        return row?.n === 3n;
      },
      first.output,
    );
    await stop(first.child, 'SIGKILL');
    expect(await statusOf(requestId)).toBe('PROCESSING');
    expect(await callbacksOf(database.db, requestId)).toEqual([]);

    const second = startWorker({ DATABASE_URL: database.location, ...slotsEnv });
    workers.push(second.child);
    await until(
      'the request to complete',
      async () => (await statusOf(requestId)) === 'COMPLETED',
      second.output,
    );
    await stop(second.child);

    expect(fakes.map((f, i) => f.server.requests.length - (before[i] ?? 0))).toEqual([1, 1, 1, 2]);
    const [row] = await database.db.query<{
      attempts: number;
      callback_delivery_id: string;
      result: unknown;
    }>('SELECT attempts, callback_delivery_id, result FROM ai_requests WHERE id = $1', [requestId]);
    expect(row?.attempts).toBe(2);
    expect(row?.result).toMatchObject({ winningOutcomeIndex: 0, agreement: 1, canDetermine: true });
    const callbacks = await callbacksOf(database.db, requestId);
    expect(callbacks.map((c) => ({ id: c.id, status: c.status }))).toEqual([
      { id: row?.callback_delivery_id, status: 'completed' },
    ]);
    expect(await countEntries(database.db, account.accountId, 'charge')).toBe(1);
    expect(await countEntries(database.db, account.accountId, 'refund')).toBe(0);
    await expectLedgerReconciles(database.db);
  });
});
