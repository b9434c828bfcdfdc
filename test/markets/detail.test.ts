import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { toSol } from '../../src/markets/read/detail.js';
import { MarketDetail, type MarketDetailBody } from '../../src/markets/schemas.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

/**
 * One fixture market whose every figure is computed by hand below: partial fills, a cancelled and
 * a filled order, an empty side and an empty book, trades out of order and tied in time, a closed
 * position and a stale event about it, a removed stake and ties in stake size.
 */

const NOW = Date.parse('2026-06-15T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = NOW - 10 * DAY;

let ctx: TestContext;
let account: TestAccount;
let body: MarketDetailBody & { requestId: string };

const w = (name: string) => wallet(`detail-${name}`);
const creator = w('creator');

function fixture(): Event[] {
  const m = 'fx';
  const order = (id: string, outcome: number, side: string, price: number, shares: string) =>
    event('order.placed', iso(T0 + HOUR), {
      marketId: m,
      orderId: id,
      wallet: w(id),
      outcome,
      side,
      price,
      shares,
    });
  const trade = (
    id: string,
    outcome: number,
    price: number,
    shares: string,
    buyer: string,
    seller: string,
    at: number,
  ) =>
    event('trade', iso(at), {
      marketId: m,
      tradeId: id,
      outcome,
      price,
      shares,
      buyer: w(buyer),
      seller: w(seller),
    });
  const position = (who: string, outcome: number, shares: string, wagered: string, at: number) =>
    event('position', iso(at), { marketId: m, wallet: w(who), outcome, shares, wagered });
  const stake = (who: string, amount: string, at: number) =>
    event('stake', iso(at), { marketId: m, wallet: w(who), username: who, amount });
  return [
    marketCreated(
      {
        id: m,
        slug: 'fixture-market',
        marketType: 'CATEGORICAL',
        outcomes: ['A', 'B', 'C'],
        feeBps: 200,
        lockPeriodSeconds: 604_800,
        closesAt: iso(NOW + 20 * DAY),
        creator: { wallet: creator, username: 'maker' },
      },
      { at: iso(T0) },
    ),
    // Two more markets of the same creator: one finalized, one cancelled.
    marketCreated({ id: 'fx-done', creator: { wallet: creator, username: 'maker' } }, { at: iso(T0) }),
    event('market.resolved', iso(T0 + DAY), { marketId: 'fx-done', winningOutcomeIndex: 1 }),
    marketCreated({ id: 'fx-off', creator: { wallet: creator, username: 'maker' } }, { at: iso(T0) }),
    event('market.status', iso(T0 + DAY), { marketId: 'fx-off', status: 'CANCELLED' }),
    // Outcome A: two bid levels (one order partially filled), two ask levels; a cancelled bid and
    // a filled ask are off the book.
    order('o1', 0, 'bid', 4000, '1000'),
    order('o2', 0, 'bid', 4000, '500'),
    event('order.filled', iso(T0 + 2 * HOUR), { orderId: 'o2', shares: '200' }),
    order('o3', 0, 'bid', 3900, '333'),
    order('o4', 0, 'bid', 4100, '700'),
    event('order.cancelled', iso(T0 + 2 * HOUR), { orderId: 'o4' }),
    order('o5', 0, 'ask', 4500, '1000'),
    order('o6', 0, 'ask', 4400, '2000'),
    event('order.filled', iso(T0 + 2 * HOUR), { orderId: 'o6' }),
    order('o7', 0, 'ask', 4600, '250'),
    // Outcome B: bids only. Outcome C: no orders at all.
    order('o8', 1, 'bid', 2000, '10000000000'),
    // Trades, newest first in the file; t4 and t5 share a timestamp (the larger id is the later).
    trade('t5', 0, 4450, '20', 'b6', 'b2', NOW - HOUR),
    trade('t4', 0, 4400, '10', 'b1', 'b3', NOW - HOUR),
    trade('t2', 0, 4300, '3333', 'b3', 'b2', NOW - 2 * HOUR),
    trade('t3', 1, 2500, '2000000000', 'b4', 'b5', NOW - 30 * HOUR),
    trade('t1', 0, 4200, '1000', 'b1', 'b2', T0 + DAY),
    // Positions: b3 sold out of B (shares 0, still wagered); b8 closed A, and an older event about
    // b8 arrives after the newer one.
    position('b1', 0, '1010', '424', NOW - HOUR),
    position('b3', 0, '3333', '1433', NOW - 2 * HOUR),
    position('b3', 1, '0', '100', NOW - 2 * HOUR),
    position('b4', 1, '2000000000', '500000000', NOW - 30 * HOUR),
    position('b7', 2, '500', '100', NOW - 3 * HOUR),
    position('b8', 0, '0', '0', NOW - 2 * HOUR),
    position('b8', 0, '999', '400', NOW - 5 * HOUR),
    // Stakes: c2/c3 tie (c2 staked first), c5/c6 tie at the same moment (wallet order), c4 removed.
    stake('c1', '5000000000', T0 + DAY),
    stake('c2', '3000000000', T0 + DAY + 1000),
    stake('c3', '3000000000', T0 + DAY + 2000),
    stake('c4', '2000000000', T0 + DAY),
    stake('c4', '0', T0 + 2 * DAY),
    stake('c5', '1000000000', T0 + 3 * DAY),
    stake('c6', '1000000000', T0 + 3 * DAY),
    stake('c7', '500000000', T0 + 3 * DAY),
  ];
}

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '1.00' });
  const report = await ingestText(ctx.database.db, ndjson(fixture()));
  expect(report).toMatchObject({ refused: 0, skipped: 0 });
  const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/fixture-market' });
  expect(response.statusCode, response.body).toBe(200);
  body = response.json();
});
afterAll(async () => {
  await ctx.close();
});

const usd = (sol: number) => Math.round(sol * (body.solPriceUsd as number) * 1e6) / 1e6;
const level = (price: number, shares: string, amount: string, orders: number) => {
  const sol = Number(amount) / 1e9;
  return { price, shares, amount, orders, valueSol: sol, valueUsd: usd(sol) };
};

describe('market detail of the fixture market', () => {
  it('answers exactly the fields of the response schema, with the request’s own id and cost', async () => {
    const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/fx' });
    expect(response.headers['content-type']).toContain('application/json');
    const again = response.json();
    expect(Object.keys(again).sort()).toEqual(
      ['requestId', ...Object.keys(MarketDetail.properties), 'costUsd', 'remainingBalanceUsd'].sort(),
    );
    expect(again.requestId).toBe(response.headers['x-request-id']);
    expect(again.requestId).not.toBe(body.requestId);
    expect(again).toMatchObject({
      costUsd: '0.02',
      remainingBalanceUsd: '0.96',
      computedAt: body.computedAt,
    });
  });

  it('prices USD values with the sandbox feed’s SOL price at that moment', async () => {
    const price = await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL' });
    expect(body.solPriceUsd).toBe(price.json().vwapPrice);
    expect(body).toMatchObject({ id: 'fx', slug: 'fixture-market', sandbox: true, computedAt: iso(NOW) });
  });

  it('aggregates open orders per price level, best first, with empty-side values', () => {
    expect(body.orderbooks['0']).toEqual({
      // 1000 + 200 (o2 partially filled) at 4000: ⌊1200 × 4000 ÷ 10,000⌋ = 480; ⌊333 × 0.39⌋ = 129.
      bids: [level(4000, '1200', '480', 2), level(3900, '333', '129', 1)],
      asks: [level(4500, '1000', '450', 1), level(4600, '250', '115', 1)],
      bestBid: 4000,
      bestAsk: 4500,
      spread: 500,
      bidLevels: 2,
      askLevels: 2,
    });
    expect(body.orderbooks['1']).toEqual({
      bids: [level(2000, '10000000000', '2000000000', 1)],
      asks: [],
      bestBid: 2000,
      bestAsk: 10000,
      spread: 8000,
      bidLevels: 1,
      askLevels: 0,
    });
    expect(body.orderbooks['2']).toEqual({
      bids: [],
      asks: [],
      bestBid: 0,
      bestAsk: 10000,
      spread: 10000,
      bidLevels: 0,
      askLevels: 0,
    });
  });

  it('takes the mid, else the last price, else 1/n, normalised', () => {
    // Raw: A (4000 + 4500) ÷ 2 = 0.425; B last trade 0.25; C 1/3. Sum 1.0083333….
    expect(body.outcomes.map((o) => o.lastPrice)).toEqual([4450, 2500, null]);
    expect(body.outcomes.map((o) => o.probability)).toEqual([0.421488, 0.247934, 0.330579]);
  });

  it('sums positions with shares, per outcome and in all', () => {
    const outcome = (index: number, label: string, totalShares: string, totalWagered: string) => ({
      index,
      label,
      totalShares,
      totalWagered,
      totalWageredSol: Number(totalWagered) / 1e9,
      totalWageredUsd: usd(Number(totalWagered) / 1e9),
    });
    expect(body.outcomes).toEqual([
      { ...outcome(0, 'A', '4343', '1857'), lastPrice: 4450, probability: 0.421488 },
      { ...outcome(1, 'B', '2000000000', '500000000'), lastPrice: 2500, probability: 0.247934 },
      { ...outcome(2, 'C', '500', '100'), lastPrice: null, probability: 0.330579 },
    ]);
    expect(body.positionStats).toEqual({
      totalPositions: 4,
      totalShares: '2000004843',
      uniqueHolders: 4,
      totalWagered: '500001957',
      totalWageredSol: 0.500001957,
      totalWageredUsd: usd(0.500001957),
      outcomeBreakdown: [
        {
          index: 0,
          label: 'A',
          totalWagered: '1857',
          totalWageredSol: 1.857e-6,
          totalWageredUsd: usd(1.857e-6),
        },
        { index: 1, label: 'B', totalWagered: '500000000', totalWageredSol: 0.5, totalWageredUsd: usd(0.5) },
        { index: 2, label: 'C', totalWagered: '100', totalWageredSol: 1e-7, totalWageredUsd: usd(1e-7) },
      ],
    });
  });

  it('counts trades all time and over the last 24 hours, and bettors', () => {
    // Σ shares × price = 4,200,000 + 14,331,900 + 5,000,000,000,000 + 44,000 + 89,000.
    expect(body.tradingStats).toEqual({
      totalVolume: '500001866',
      totalVolumeSol: 0.500001866,
      totalVolumeUsd: usd(0.500001866),
      totalTrades: 5,
      // b1…b6 traded; b7 only holds; b3 and b8 hold nothing more but b3 traded.
      totalBettors: 7,
      last24hVolume: '1446',
      last24hVolumeSol: 1.446e-6,
      last24hVolumeUsd: usd(1.446e-6),
      last24hTrades: 3,
    });
  });

  it('ranks the five largest stakes, ties to the earlier stake then the wallet', () => {
    const [first, second] = [w('c5'), w('c6')].sort();
    const curator = (rank: number, who: string, wallet: string, amount: string) => ({
      rank,
      wallet,
      username: who,
      stakedAmount: amount,
      stakedAmountUsd: usd(Number(amount) / 1e9),
    });
    const name = (wallet: string | undefined) => (wallet === w('c5') ? 'c5' : 'c6');
    expect(body.curatorStaking).toEqual({
      totalStaked: '13500000000',
      totalStakedUsd: usd(13.5),
      stakerCount: 6,
      // Fees 500,001,866 × 2% over 10 days of trading, a year of it, over 13.5 SOL staked: 2.70%.
      estimatedApy: 2.7,
      lockPeriodSeconds: 604_800,
      topCurators: [
        curator(1, 'c1', w('c1'), '5000000000'),
        curator(2, 'c2', w('c2'), '3000000000'),
        curator(3, 'c3', w('c3'), '3000000000'),
        curator(4, name(first), first as string, '1000000000'),
        curator(5, name(second), second as string, '1000000000'),
      ],
    });
  });

  it('scores the creator and the market', () => {
    // Creator: 1 finalized, 1 cancelled → 600 × 2/4 + 400 × 1/20 = 320.
    expect(body.creator).toEqual({ wallet: creator, username: 'maker', credibilityScore: 320 });
    // 320 ÷ 2 + 300 × log10(14.5) ÷ 3 + 200 × 6/20 = 160 + 116.1 + 60.
    expect(body.credibilityScore).toBe(336);
  });

  it('describes the resolution of an unresolved AI market', () => {
    expect(body.resolution).toEqual({
      type: 'AI',
      source: 'ai-consensus',
      metadata: { type: 'AI', symbol: null, condition: null, targetPrice: null, tolerance: null },
      resolvedAt: null,
      winningOutcomeIndex: null,
      details: null,
      attestation: null,
      votes: null,
    });
    expect(body.prediction).toEqual({ priceFeed: null, aiPrediction: null });
    expect(body).toMatchObject({ status: 'OPEN', marketType: 'CATEGORICAL', feeBps: 200 });
  });

  it('shows a resolved market’s winner and its transitions', async () => {
    const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/fx-done' });
    expect(response.json().resolution).toMatchObject({
      resolvedAt: iso(T0 + DAY),
      winningOutcomeIndex: 1,
      details: {
        resolvedBy: 'platform',
        platform: null,
        transitions: [{ from: 'OPEN', to: 'FINALIZED', at: iso(T0 + DAY), by: 'platform' }],
      },
    });
  });
});

describe('price-feed markets', () => {
  it('carry the live VWAP of their symbol in the market’s mode', async () => {
    await ingestText(
      ctx.database.db,
      ndjson([
        marketCreated({
          id: 'btc-100k',
          resolution: {
            type: 'PRICE_FEED',
            symbol: 'BTC',
            condition: 'above',
            targetPrice: 100000,
            tolerance: 500,
          },
        }),
      ]),
    );
    const detail = (
      await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/btc-100k' })
    ).json();
    const btc = (await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/BTC' })).json();
    expect(detail.prediction.priceFeed).toEqual({
      currentPrice: btc.vwapPrice,
      isValid: btc.isValid,
      targetPrice: 100000,
      condition: 'above',
      symbol: 'BTC',
      tolerance: 500,
      lastUpdated: iso(NOW),
    });
    expect(detail.resolution).toMatchObject({
      source: 'BTC:above:100000:500',
      metadata: {
        type: 'PRICE_FEED',
        symbol: 'BTC',
        condition: 'above',
        targetPrice: 100000,
        tolerance: 500,
      },
    });
  });
});

describe('SOL amounts', () => {
  it('are the exact decimal of the lamports, without float noise (1522800000 → 1.5228)', () => {
    const decimal = (lamports: bigint) => {
      const text = `${lamports / 1_000_000_000n}.${(lamports % 1_000_000_000n).toString().padStart(9, '0')}`;
      return text;
    };
    expect(toSol('1522800000')).toBe(1.5228);
    for (const lamports of [0n, 1n, 100n, 999_999_999n, 1_000_000_000n, 1_522_800_000n, 123_456_789_012n]) {
      expect(toSol(String(lamports))).toBe(Number(decimal(lamports)));
    }
    // Every amount up to 10^15 lamports (a million SOL) is the double nearest its decimal, which
    // is the one JSON prints as that decimal.
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (lamports) => {
        expect(toSol(String(lamports))).toBe(Number(decimal(lamports)));
      }),
      { numRuns: 2000 },
    );
  });
});
