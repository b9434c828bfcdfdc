import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketQuestion, MarketSource } from '../../src/ai/market-port.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import { callbacksOf, createCallbackTable, poll, question, rowCount, submit, testQueue } from './helpers.js';

/**
 * The input limits (docs/ai.md#limits): every bad body is a 400 VALIDATION_ERROR naming each
 * problem, with nothing charged and nothing stored; bodies exactly at the limits pass. And the
 * `{ marketId }` variant through the MarketSource port.
 */

const MARKETS: Record<string, MarketQuestion> = {
  'mkt-live': {
    question: 'Will the Fed cut rates in December 2026?',
    outcomes: ['Yes', 'No'],
    context: 'FOMC meeting of 2026-12-16.',
    mode: 'live',
  },
  'mkt-demo': {
    question: 'Will ETH flip BTC by market cap in 2026?',
    outcomes: ['Yes', 'No'],
    context: '[sandbox:votes=1,1,1,?]',
    mode: 'sandbox',
  },
  'mkt-broken': { question: '', outcomes: ['Only one'], context: '', mode: 'sandbox' },
};
const markets: MarketSource = { find: async (_ctx, id) => MARKETS[id] ?? null };

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ markets });
  await createCallbackTable(ctx.database.db);
  account = await ctx.createAccount({ balanceUsd: '100.00' });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const long = (n: number, char = 'a') => char.repeat(n);
// Padded with x, not o: `10ooo` and `1oooo` differ only by a 0 that looks like an o (docs/ai.md#limits).
const outcomes = (n: number, length = 5) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(length, 'x'));

const INVALID: [string, Record<string, unknown>, { path: string; message: string }[]][] = [
  [
    'no question',
    { outcomes: ['Yes', 'No'], callbackUrl: 'https://a.example.com' },
    [{ path: 'body.question', message: 'is required' }],
  ],
  [
    'nothing at all',
    {},
    [
      { path: 'body.question', message: 'is required' },
      { path: 'body.outcomes', message: 'is required' },
      { path: 'body.callbackUrl', message: 'is required' },
    ],
  ],
  [
    'no callbackUrl',
    { question: 'Q?', outcomes: ['Yes', 'No'] },
    [{ path: 'body.callbackUrl', message: 'is required' }],
  ],
  [
    'one outcome',
    question({ outcomes: ['Yes'] }),
    [{ path: 'body.outcomes', message: 'must not have fewer than 2 items' }],
  ],
  [
    '21 outcomes',
    question({ outcomes: outcomes(21) }),
    [{ path: 'body.outcomes', message: 'must not have more than 20 items' }],
  ],
  [
    'the same outcome twice',
    question({ outcomes: ['Yes', 'Yes'] }),
    [{ path: 'body.outcomes', message: 'must not have duplicate items' }],
  ],
  [
    'outcomes that differ only in case and spaces',
    question({ outcomes: ['Yes', 'No', ' yes '] }),
    [{ path: 'body.outcomes[2]', message: 'repeats outcome 0 (labels must be distinct)' }],
  ],
  [
    'a blank question',
    question({ question: '   ' }),
    [{ path: 'body.question', message: 'must not be blank' }],
  ],
  [
    'a blank outcome',
    question({ outcomes: ['Yes', ' '] }),
    [{ path: 'body.outcomes[1]', message: 'must not be blank' }],
  ],
  [
    'a 1,001-character question',
    question({ question: long(1001) }),
    [{ path: 'body.question', message: 'must not have more than 1000 characters' }],
  ],
  [
    'a 201-character outcome',
    question({ outcomes: ['Yes', long(201)] }),
    [{ path: 'body.outcomes[1]', message: 'must not have more than 200 characters' }],
  ],
  [
    'a 10,001-character context',
    question({ context: long(10_001) }),
    [{ path: 'body.context', message: 'must not have more than 10000 characters' }],
  ],
  [
    'a threshold above 1',
    question({ confidenceThreshold: 1.01 }),
    [{ path: 'body.confidenceThreshold', message: 'must be <= 1' }],
  ],
  [
    'a negative threshold',
    question({ confidenceThreshold: -0.1 }),
    [{ path: 'body.confidenceThreshold', message: 'must be >= 0' }],
  ],
  [
    'an http callback',
    question({ callbackUrl: 'http://hooks.example.com/x' }),
    [{ path: 'body.callbackUrl', message: 'must be an https:// URL' }],
  ],
  [
    'a callback with a password',
    question({ callbackUrl: 'https://user:pw@hooks.example.com/x' }),
    [{ path: 'body.callbackUrl', message: 'must not contain a user name or password' }],
  ],
  [
    'a callback that is not a URL',
    question({ callbackUrl: 'hooks.example.com' }),
    [{ path: 'body.callbackUrl', message: 'is not a valid URL' }],
  ],
  [
    'a 2,049-character callback',
    question({ callbackUrl: `https://hooks.example.com/${long(2049 - 26)}` }),
    [{ path: 'body.callbackUrl', message: 'must not have more than 2048 characters' }],
  ],
  [
    'an unknown field',
    question({ model: 'gpt-5' }),
    [{ path: 'body.model', message: 'is not a known field' }],
  ],
  [
    'outcomes that are not strings',
    question({ outcomes: [1, 2] }),
    [
      { path: 'body.outcomes[0]', message: 'must be string' },
      { path: 'body.outcomes[1]', message: 'must be string' },
    ],
  ],
  [
    'a NUL character',
    question({ question: 'Will\u0000it?' }),
    [{ path: 'body.question', message: 'must not contain NUL characters' }],
  ],
  [
    'a malformed sandbox directive (sandbox account)',
    question({ context: '[sandbox:votes=1,1]' }),
    [{ path: 'body.context', message: 'votes takes exactly 4 entries, e.g. 1,1,1,0' }],
  ],
  [
    'marketId with a question',
    { marketId: 'mkt-live', question: 'Q?' },
    [{ path: 'body.question', message: 'must not be given with marketId' }],
  ],
  [
    'several problems at once',
    { question: '', outcomes: ['A'], callbackUrl: 'ftp://x', context: 5 },
    [
      { path: 'body.question', message: 'must not have fewer than 1 characters' },
      { path: 'body.outcomes', message: 'must not have fewer than 2 items' },
      { path: 'body.context', message: 'must be string' },
      // A domain rule, reported with the schema's problems (not on the next try).
      { path: 'body.callbackUrl', message: 'must be an https:// URL' },
    ],
  ],
];

describe('input limits', () => {
  it.each(INVALID)('%s → 400 VALIDATION_ERROR, free, nothing stored', async (_name, body, problems) => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const rows = await rowCount(ctx.database.db, account.accountId);
    const response = await submit(ctx, account.key, body);
    expect(response.statusCode).toBe(400);
    const json = response.json();
    expect({ code: json.code, problems: json.details?.problems }).toEqual({
      code: 'VALIDATION_ERROR',
      problems,
    });
    expect(json.requestId).toBe(response.headers['x-request-id']);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
    expect(await rowCount(ctx.database.db, account.accountId)).toBe(rows);
  });

  it('bodies exactly at the limits are accepted (characters, not UTF-16 units)', async () => {
    const atLimits = question({
      question: long(1000, '🦀'),
      outcomes: outcomes(20, 200),
      context: long(10_000, 'é'),
      confidenceThreshold: 1,
      callbackUrl: `https://hooks.example.com/${long(2048 - 26)}`,
    });
    const response = await submit(ctx, account.key, atLimits);
    expect(response.statusCode).toBe(200);
    await testQueue(ctx).drain();
    const record = (await poll(ctx, account.key, response.json().requestId)).json();
    expect(record.status).toBe('COMPLETED');
    expect(record.result.question).toBe(atLimits.question);
  });
});

describe('{ marketId }', () => {
  it('an unknown market is 404 NOT_FOUND, free', async () => {
    const plain = await createTestContext({ database: ctx.database });
    try {
      const response = await submit(plain, account.key, { marketId: 'mkt-live' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: 'Market mkt-live not found',
        code: 'NOT_FOUND',
        requestId: response.headers['x-request-id'],
      });
    } finally {
      await plain.close();
    }
    expect((await submit(ctx, account.key, { marketId: 'mkt-none' })).statusCode).toBe(404);
  });

  it('resolves the market’s title, outcome labels and description; callbackUrl is optional', async () => {
    const response = await submit(ctx, account.key, { marketId: 'mkt-demo', confidenceThreshold: 0.5 });
    expect(response.statusCode).toBe(200);
    const requestId = response.json().requestId as string;
    await testQueue(ctx).drain();
    const record = (await poll(ctx, account.key, requestId)).json();
    expect(record.result).toMatchObject({
      question: 'Will ETH flip BTC by market cap in 2026?',
      winningOutcomeIndex: 1,
      winningOutcomeLabel: 'No',
      agreement: 0.75,
      canDetermine: true,
    });
    expect(await callbacksOf(ctx.database.db, requestId)).toEqual([]);
  });

  it('a sandbox account resolves even a live market with the sandbox models', async () => {
    const response = await submit(ctx, account.key, { marketId: 'mkt-live' });
    await testQueue(ctx).drain();
    const record = (await poll(ctx, account.key, response.json().requestId)).json();
    expect(record.result.modelsUsed).toEqual([
      'sandbox/alpha',
      'sandbox/beta',
      'sandbox/gamma',
      'sandbox/delta',
    ]);
  });

  it('a live account resolving a sandbox (demo) market uses the sandbox models, even without live providers', async () => {
    const live = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    expect((await submit(ctx, live.key, question())).json().code).toBe('AI_UNAVAILABLE');
    const response = await submit(ctx, live.key, { marketId: 'mkt-demo' });
    expect(response.statusCode).toBe(200);
    await testQueue(ctx).drain();
    const record = (await poll(ctx, live.key, response.json().requestId)).json();
    expect(record.result.modelsUsed[0]).toBe('sandbox/alpha');
  });

  it('a market whose data breaks the limits cannot be resolved: 400 naming the market’s fields', async () => {
    const response = await submit(ctx, account.key, { marketId: 'mkt-broken' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'Market mkt-broken cannot be resolved as it stands',
      code: 'VALIDATION_ERROR',
      details: {
        problems: [
          { path: 'market.title', message: 'must not be blank' },
          { path: 'market.outcomes', message: 'must list 2 to 20 outcomes (got 1)' },
        ],
      },
    });
  });
});
