import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AnswerParts,
  PART_MIN_CHARS,
  splitAnswer,
  splitEncoded,
} from '../../src/idempotency/answer-parts.js';
import { classifyHeldKey } from '../../src/idempotency/idempotency.js';
import { answerAwaitingBalance } from '../../src/idempotency/pending-answer.js';
import { CoalescingBiller } from '../../src/ledger/coalescing-biller.js';
import { silentLog } from '../../src/logger.js';
import { createRetention } from '../../src/retention/retention.js';
import { prunedTables } from '../../src/worker/worker.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Stored answers share their bulk (src/idempotency/answer-parts.ts): keyed batch answers with the
 * same prices store their price list once, every replay is still the first answer byte for byte,
 * and a part outlives every answer that refers to it.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

// The listed tokens: a price list well over PART_MIN_CHARS.
const SYMBOLS = ['SOL', 'BTC', 'ETH', 'USDC', 'USDT', 'BONK', 'JUP', 'RAY', 'ORCA', 'PYTH'];

function batch(account: TestAccount, key: string, symbols: string[] = SYMBOLS) {
  return ctx.request(account.key, {
    method: 'POST',
    url: '/api/v1/price/batch',
    payload: { symbols },
    headers: { 'idempotency-key': key },
  });
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(sql, params);
  return Number(row?.n ?? 0);
}

describe('splitAnswer', () => {
  it('keeps a small answer whole and splits a large one at its first [ and last ]', () => {
    expect(splitAnswer('{"a":[1,2],"b":3}')).toEqual({ head: '{"a":[1,2],"b":3}', tail: null });
    const list = `[${Array.from({ length: 400 }, (_, i) => `{"n":${i}}`).join(',')}]`;
    expect(list.length).toBeGreaterThan(PART_MIN_CHARS);
    const body = `{"requestId":"req_1","prices":${list},"costUsd":"0.10","remainingBalanceUsd":"0.90"}`;
    const shape = splitAnswer(body);
    expect(shape.head).toBe('{"requestId":"req_1","prices":');
    expect(shape.part?.text).toBe(list);
    expect(shape.tail).toBe(',"costUsd":"0.10","remainingBalanceUsd":"0.90"}');
    expect(`${shape.head}${shape.part?.text}${shape.tail}`).toBe(body);
    // The same list in another answer is the same part.
    expect(splitAnswer(`{"requestId":"req_2","prices":${list}}`).part?.hash).toBe(shape.part?.hash);
  });
});

describe('splitEncoded', () => {
  it('splits the UTF-8 of an answer where splitAnswer splits its text', () => {
    const list = (item: string, n: number) =>
      `[${Array.from({ length: n }, (_, i) => `{"n":${i},"s":"${item}"}`).join(',')}]`;
    // Two-, three- and four-byte characters make a part's bytes outnumber its characters: at the
    // threshold, the characters decide.
    const perItem = (item: string) => `{"n":0,"s":"${item}"},`.length;
    // A part of at least PART_MIN_CHARS bytes but fewer characters: kept whole, as its text is.
    let n = 1;
    while (Buffer.byteLength(list('é€😀', n)) < PART_MIN_CHARS) n += 1;
    expect(list('é€😀', n).length).toBeLessThan(PART_MIN_CHARS);
    const answers = [
      '{"a":[1,2],"b":3}',
      '{"a":1}',
      '{"a":"]["}',
      `{"requestId":"req_1","prices":${list('x', 400)},"remainingBalanceUsd":"`,
      `{"requestId":"req_1","prices":${list('é€😀', 400)},"remainingBalanceUsd":"`,
      `{"requestId":"req_1","prices":${list('é€😀', n)},"remainingBalanceUsd":"`,
      `{"requestId":"req_1","prices":${list('é€😀', Math.ceil(PART_MIN_CHARS / perItem('é€😀')))},"remainingBalanceUsd":"`,
      `{"requestId":"req_1","prices":${list('x', Math.ceil(PART_MIN_CHARS / perItem('x')))},"remainingBalanceUsd":"`,
      `{"é":${list('€', 300)},"tail":"😀 ]"`,
    ];
    for (const answer of answers) {
      for (const suffix of ['', '0.00"}']) {
        const encoded = Buffer.from(`${answer}${suffix}`);
        expect(splitEncoded(encoded, Buffer.byteLength(answer))).toEqual(splitAnswer(answer));
        // Again, now that its part (if any) is the last one seen.
        expect(splitEncoded(encoded, Buffer.byteLength(answer))).toEqual(splitAnswer(answer));
      }
    }
  });
});

describe('stored answers share their parts', () => {
  it('keyed batches with the same prices store the list once; each replays byte for byte, charged once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const partsBefore = await count('SELECT count(*) AS n FROM idempotency_parts');
    const firsts = await Promise.all(['p-1', 'p-2', 'p-3'].map((key) => batch(account, key)));
    for (const first of firsts) expect(first.statusCode).toBe(200);
    // Same clock, same feed: the same price list, stored once for the three answers.
    expect(await count('SELECT count(*) AS n FROM idempotency_parts')).toBe(partsBefore + 1);
    expect(
      await count(
        'SELECT count(DISTINCT response_part) AS n FROM idempotency_keys WHERE account_id = $1 AND response_part IS NOT NULL',
        [account.accountId],
      ),
    ).toBe(1);
    const replays = await Promise.all(['p-1', 'p-2', 'p-3'].map((key) => batch(account, key)));
    replays.forEach((replay, i) => {
      expect(replay.statusCode).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(firsts[i]?.body);
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(3);
  });

  it('a small answer is stored whole', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const first = await batch(account, 'small', ['SOL']);
    expect(first.statusCode).toBe(200);
    expect(
      await count(
        'SELECT count(*) AS n FROM idempotency_keys WHERE account_id = $1 AND response_part IS NULL',
        [account.accountId],
      ),
    ).toBe(1);
    expect((await batch(account, 'small', ['SOL'])).body).toBe(first.body);
  });

  it('a part stored by a transaction that rolled back is sent again, not trusted', async () => {
    const parts = new AnswerParts(() => ctx.clock.now().getTime());
    const shape = splitAnswer(`{"x":[${'"rolled back",'.repeat(300)}0]}`);
    const hash = shape.part?.hash as string;
    await ctx.database.db
      .transaction(async (tx) => {
        await parts.store(tx, [shape]);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await count('SELECT count(*) AS n FROM idempotency_parts WHERE hash = $1', [hash])).toBe(0);
    await ctx.database.db.transaction((tx) => parts.store(tx, [shape]));
    expect(await count('SELECT count(*) AS n FROM idempotency_parts WHERE hash = $1', [hash])).toBe(1);
  });

  it('parts are pruned only after every answer that refers to them', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const first = await batch(account, 'pruned', SYMBOLS.slice(1));
    expect(first.statusCode).toBe(200);
    const [row] = await ctx.database.db.query<{ response_part: string }>(
      'SELECT response_part FROM idempotency_keys WHERE account_id = $1',
      [account.accountId],
    );
    const hash = row?.response_part as string;
    expect(hash).toEqual(expect.any(String));
    const parts = () => count('SELECT count(*) AS n FROM idempotency_parts WHERE hash = $1', [hash]);
    const retention = createRetention({
      db: ctx.database.db,
      tables: await prunedTables(ctx.config),
      clock: ctx.clock,
      log: silentLog,
      settings: ctx.config.retention,
    });
    const hours = (h: number) => new Date(ctx.clock.now().getTime() + h * 3_600_000 + 1000);
    await retention.run(hours(24));
    // The answer is gone after 24 hours; its part stays until 26 hours of disuse.
    expect(
      await count('SELECT count(*) AS n FROM idempotency_keys WHERE account_id = $1', [account.accountId]),
    ).toBe(0);
    expect(await parts()).toBe(1);
    await retention.run(hours(26));
    expect(await parts()).toBe(0);
  });
});

describe('answers of charges decided one by one', () => {
  it('an account short of its batch: the charges that fit store their answers, the refused one none', async () => {
    const account = await ctx.createAccount({ balanceUsd: '0.50' });
    const db = ctx.database.db;
    const biller = new CoalescingBiller(db, { maxBatch: 100, maxInFlight: 1 }, new AnswerParts());
    const list = `[${Array.from({ length: 300 }, (_, i) => `{"n":${i}}`).join(',')}]`;
    const keys = ['short-1', 'short-2', 'short-3'];
    // The first goes alone; the other two queue behind it and make one batch that only half fits:
    // 0.50 − 0.20 leaves 0.30 for 0.40 of charges, decided one by one.
    const outcomes = await Promise.all(
      keys.map((key) =>
        biller.charge({
          accountId: account.accountId,
          amountMicros: 200_000n,
          operation: 'test',
          requestId: `req-${key}`,
          answer: answerAwaitingBalance(
            { idempotencyKey: key, fingerprint: 'print', createdAt: ctx.clock.now() },
            `{"requestId":"req-${key}","items":${list},"remainingBalanceUsd":"`,
          ),
        }),
      ),
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false]);
    expect(biller.stats.batches).toBe(2);
    for (const [i, key] of keys.slice(0, 2).entries()) {
      const claim = await classifyHeldKey(
        db,
        { accountId: account.accountId, key, requestId: 'retry' },
        'print',
        ctx.clock.now(),
      );
      const balance = i === 0 ? '0.30' : '0.10';
      expect(claim).toMatchObject({
        kind: 'replay',
        requestId: `req-${key}`,
        body: `{"requestId":"req-${key}","items":${list},"remainingBalanceUsd":"${balance}"}`,
      });
    }
    // The refused charge took no key: its retry runs afresh.
    expect(
      await count('SELECT count(*) AS n FROM idempotency_keys WHERE account_id = $1', [account.accountId]),
    ).toBe(2);
  });
});
