import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxQuote } from '../../src/prices/sandbox/feed.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

let ctx: TestContext;
let account: TestAccount;

const SOL_MINT = 'So11111111111111111111111111111111111111112';
const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';

beforeAll(async () => {
  // Live venues point nowhere: a sandbox account must never reach them.
  ctx = await createTestContext({ config: { PRICE_VENUES: '' } });
  // A moment outside sandbox-gamma's outlier minutes keeps expectations simple.
  ctx.clock.set('2026-11-21T12:00:05Z');
  account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function getPrice(symbol: string, key = account.key) {
  return ctx.request(key, { method: 'GET', url: `/api/v1/price/${encodeURIComponent(symbol)}` });
}
function batch(symbols: unknown, key = account.key) {
  return ctx.request(key, { method: 'POST', url: '/api/v1/price/batch', payload: { symbols } });
}

describe('GET /price/:symbolOrMint (sandbox)', () => {
  it('prices SOL from the three simulated venues and charges 0.01', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await getPrice('SOL');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const t = ctx.clock.now().getTime();
    const quotes = (['sandbox-alpha', 'sandbox-beta', 'sandbox-gamma'] as const).map((v) =>
      sandboxQuote('SOL', v, t),
    );
    const vwap =
      quotes.reduce((s, q) => s + q.price * q.volume24hUsd, 0) /
      quotes.reduce((s, q) => s + q.volume24hUsd, 0);
    expect(body).toMatchObject({
      requestId: response.headers['x-request-id'],
      symbol: 'SOL',
      sourceCount: 3,
      isValid: true,
      token: { symbol: 'SOL', mint: SOL_MINT },
      unavailableSources: [],
      resolutionTimestamp: ctx.clock.now().toISOString(),
      costUsd: '0.01',
      remainingBalanceUsd: '0.99',
    });
    expect(body.vwapPrice).toBeCloseTo(vwap, 8);
    expect(body.sources.map((s: { name: string }) => s.name)).toEqual([
      'sandbox-alpha',
      'sandbox-beta',
      'sandbox-gamma',
    ]);
    expect(body.sources[0]).toEqual({
      name: 'sandbox-alpha',
      price: quotes[0]?.price,
      volume24h: quotes[0]?.volume24hUsd,
      timestamp: quotes[0]?.timestamp.toISOString(),
      used: true,
      status: 'used',
      deviation: expect.any(Number),
    });
    expect(before - (await balanceOf(ctx.database.db, account.accountId))).toBe(10_000n);
  });

  it('accepts any case, and a listed mint prices as its token', async () => {
    const lower = (await getPrice('sol')).json();
    const byMint = (await getPrice(SOL_MINT)).json();
    expect(lower.symbol).toBe('SOL');
    expect(byMint.symbol).toBe(SOL_MINT);
    expect(byMint.token).toEqual({ symbol: 'SOL', mint: SOL_MINT });
    expect(byMint.vwapPrice).toBe(lower.vwapPrice);
  });

  it('refuses malformed input (400 INVALID_SYMBOL) and unknown tokens (404 SYMBOL_NOT_FOUND), free', async () => {
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    for (const bad of ['SO$L', 'a'.repeat(16), `${SOL_MINT.slice(0, -1)}0`, ' ']) {
      const response = await getPrice(bad);
      expect(response.statusCode, bad).toBe(400);
      expect(response.json()).toMatchObject({
        code: 'INVALID_SYMBOL',
        details: { problems: [{ path: 'path.symbolOrMint' }] },
      });
    }
    const unknown = await getPrice('doge');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      error: 'Unknown symbol DOGE',
      code: 'SYMBOL_NOT_FOUND',
      symbol: 'DOGE',
      requestId: unknown.headers['x-request-id'],
    });
    const unknownMint = await getPrice(UNKNOWN_MINT);
    expect(unknownMint.statusCode).toBe(404);
    expect(unknownMint.json()).toMatchObject({ code: 'SYMBOL_NOT_FOUND', symbol: UNKNOWN_MINT });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges);
  });

  it('drops sandbox-gamma as an outlier during its off minutes', async () => {
    // Find a minute where gamma is off (the feed is deterministic, so this is stable).
    const { isSandboxOutlierWindow } = await import('../../src/prices/sandbox/feed.js');
    let t = Date.parse('2026-11-21T13:00:00Z');
    while (!isSandboxOutlierWindow('ETH', t)) t += 60_000;
    ctx.clock.set(new Date(t + 5_000));
    const body = (await getPrice('ETH')).json();
    expect(body.sources.find((s: { name: string }) => s.name === 'sandbox-gamma')).toMatchObject({
      used: false,
      status: 'outlier',
    });
    expect(body).toMatchObject({ sourceCount: 2, isValid: true });
    ctx.clock.set('2026-11-21T12:00:05Z');
  });
});

describe('POST /price/batch (sandbox)', () => {
  it('collapses duplicates, keeps request order, and charges 0.05 + 0.01 per distinct symbol', async () => {
    const rich = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
    const response = await batch(['ETH', 'sol', 'SOL', SOL_MINT, 'btc', 'ETH'], rich.key);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.prices.map((p: { symbol: string }) => p.symbol)).toEqual(['ETH', 'SOL', 'BTC']);
    expect(body.prices.every((p: { isValid: boolean }) => p.isValid)).toBe(true);
    expect(body).toMatchObject({ costUsd: '0.08', remainingBalanceUsd: '0.92' });
    const single = (await getPrice('BTC', rich.key)).json();
    expect(body.prices[2].vwapPrice).toBe(single.vwapPrice);
  });

  it('an unknown symbol is an item that says so; every distinct symbol requested is charged', async () => {
    const payer = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
    const body = (await batch(['SOL', 'NOPE', UNKNOWN_MINT], payer.key)).json();
    expect(body.prices[1]).toEqual({
      symbol: 'NOPE',
      vwapPrice: null,
      sources: [],
      sourceCount: 0,
      isValid: false,
      unavailableSources: [],
      error: { code: 'SYMBOL_NOT_FOUND', message: 'Unknown symbol NOPE' },
    });
    expect(body.prices[2].error.code).toBe('SYMBOL_NOT_FOUND');
    expect(body.costUsd).toBe('0.08');
  });

  it('refuses more than 50 symbols with BATCH_LIMIT_EXCEEDED and maxSymbols, free', async () => {
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    const symbols = Array.from({ length: 51 }, (_, i) => (i % 2 ? 'SOL' : 'BTC'));
    const response = await batch(symbols);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'A batch holds at most 50 symbols (got 51)',
      code: 'BATCH_LIMIT_EXCEEDED',
      maxSymbols: 50,
      requestId: response.headers['x-request-id'],
    });
    expect((await batch(symbols.slice(0, 50))).statusCode).toBe(200);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges + 1);
  });

  it('malformed entries fail the whole batch, naming each; nothing priced means an error, free', async () => {
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    const malformed = await batch(['SOL', 'B$D', 'ok', '!!']);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().details.problems.map((p: { path: string }) => p.path)).toEqual([
      'body.symbols[1]',
      'body.symbols[3]',
    ]);
    const nothing = await batch(['NOPE', 'NADA']);
    expect(nothing.statusCode).toBe(404);
    expect(nothing.json()).toMatchObject({ code: 'SYMBOL_NOT_FOUND', symbol: 'NOPE' });
    for (const bad of [[], 'SOL', [1, 2], null]) {
      const response = await batch(bad);
      expect(response.statusCode).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges);
  });
});
