import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import { createCallbackTable, question, submit, testQueue } from './helpers.js';

/**
 * Money under a mixed run: 500 requests — resolutions that complete, fail, or cannot determine,
 * bad input, requests the balance cannot pay — sent concurrently while a worker drains. Every
 * accepted request is charged once, every FAILED one refunded once, nothing else costs anything,
 * and the ledger reconciles.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
  await createCallbackTable(ctx.database.db);
});
afterAll(async () => {
  await ctx.close();
});

type Kind = 'completes' | 'fails' | 'undetermined' | 'invalid';

const BODIES: Record<Kind, unknown> = {
  completes: question({ context: '[sandbox:votes=1,1,1,0]' }),
  fails: question({ context: '[sandbox:votes=0,x,x,1]' }),
  undetermined: question({ context: '[sandbox:votes=?,?,?,x]' }),
  invalid: question({ outcomes: ['Only one'] }),
};
const KINDS: Kind[] = ['completes', 'completes', 'fails', 'undetermined', 'invalid'];

describe('500 mixed AI requests', () => {
  it('charges each accepted request once, refunds each FAILED one once, and reconciles', async () => {
    const rich: TestAccount[] = [];
    for (let i = 0; i < 4; i++) rich.push(await ctx.createAccount({ balanceUsd: '100.00' }));
    // 1.00 pays for four resolutions; its later requests are refused (402) unless refunds came first.
    const poor = await ctx.createAccount({ balanceUsd: '1.00' });
    const accounts = [...rich, poor];

    const sent: { account: TestAccount; kind: Kind; status: number; requestId?: string }[] = [];
    const queue = testQueue(ctx);
    for (let wave = 0; wave < 10; wave++) {
      const batch = Array.from({ length: 50 }, (_, i) => {
        const account = accounts[i % accounts.length] as TestAccount;
        const kind = KINDS[(wave + i) % KINDS.length] as Kind;
        return { account, kind };
      });
      const [responses] = await Promise.all([
        Promise.all(batch.map(({ account, kind }) => submit(ctx, account.key, BODIES[kind]))),
        queue.drain(),
      ]);
      responses.forEach((response, i) => {
        const item = batch[i] as (typeof batch)[number];
        sent.push({ ...item, status: response.statusCode, requestId: response.json().requestId });
      });
    }
    await queue.drain();
    expect(sent).toHaveLength(500);

    const db = ctx.database.db;
    for (const account of accounts) {
      const mine = sent.filter((s) => s.account === account);
      expect(mine.filter((s) => s.kind === 'invalid').every((s) => s.status === 400)).toBe(true);
      const accepted = mine.filter((s) => s.status === 200);
      const refused = mine.filter((s) => s.status === 402);
      expect(accepted.length + refused.length + mine.filter((s) => s.status === 400).length).toBe(
        mine.length,
      );
      if (account !== poor) expect(refused).toHaveLength(0);
      const failed = accepted.filter((s) => s.kind === 'fails').length;
      const deposit = account === poor ? 1_000_000n : 100_000_000n;
      expect(await balanceOf(db, account.accountId)).toBe(
        deposit - 250_000n * BigInt(accepted.length) + 250_000n * BigInt(failed),
      );
      // Charged once per accepted request, refunded once per FAILED one, by request id.
      const entries = await db.query<{ request_id: string | null; kind: string; refund_of: bigint | null }>(
        `SELECT request_id, kind, refund_of FROM ledger_entries WHERE account_id = $1 AND kind IN ('charge', 'refund')`,
        [account.accountId],
      );
      const charges = entries.filter((e) => e.kind === 'charge');
      expect(charges.map((e) => e.request_id).sort()).toEqual(accepted.map((s) => s.requestId).sort());
      expect(entries.filter((e) => e.kind === 'refund')).toHaveLength(failed);
    }
    expect(sent.filter((s) => s.account === poor && s.status === 402).length).toBeGreaterThan(0);

    const statuses = await db.query<{ status: string; n: bigint }>(
      'SELECT status, count(*) AS n FROM ai_requests GROUP BY status ORDER BY status',
    );
    const accepted = sent.filter((s) => s.status === 200);
    expect(statuses).toEqual([
      { status: 'COMPLETED', n: BigInt(accepted.filter((s) => s.kind !== 'fails').length) },
      { status: 'FAILED', n: BigInt(accepted.filter((s) => s.kind === 'fails').length) },
    ]);
    const [callbacks] = await db.query<{ n: bigint; distinct: bigint }>(
      'SELECT count(*) AS n, count(DISTINCT request_id) AS distinct FROM test_recorded_callbacks',
    );
    expect(callbacks).toEqual({ n: BigInt(accepted.length), distinct: BigInt(accepted.length) });
    await expectLedgerReconciles(db);
  });
});

describe('Idempotency-Key on POST /ai/resolve', () => {
  it('a retry with the same key replays the answer: one request, one charge', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const send = () =>
      ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/ai/resolve',
        payload: question(),
        headers: { 'idempotency-key': 'resolve-once' },
      });
    const responses = [await send(), await send()];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(responses[1]?.headers['idempotent-replayed']).toBe('true');
    expect(responses[1]?.body).toBe(responses[0]?.body);
    const [row] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM ai_requests WHERE account_id = $1',
      [account.accountId],
    );
    expect(Number(row?.n)).toBe(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(750_000n);
    await expectLedgerReconciles(ctx.database.db);
  });
});
