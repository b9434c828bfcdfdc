import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWelcome } from '../../src/first-start.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * The sandbox demo markets as a first start writes them (docs/markets.md#demo-data): replaying each
 * market's trade rows in `at` order (buyer + shares, seller − shares, never below zero; a buy adds
 * ⌊shares × price ÷ 10,000⌋ to the wager) gives exactly the positions, holders and bettors the API
 * answers — in the detail and in the list's `bettors` order.
 */

let ctx: TestContext;
let key: string;

interface TradeRow {
  market_id: string;
  trade_id: string;
  outcome_index: number;
  price: number;
  shares: string;
  buyer: string;
  seller: string;
  at: Date;
}

interface Implied {
  trades: number;
  /** Per outcome: positions with shares > 0, their shares and their wager. */
  outcomes: Map<number, { positions: number; shares: bigint; wagered: bigint }>;
  holders: number;
  bettors: number;
}

/** What one market's trades imply, replayed in (at, tradeId) order. */
function implied(trades: TradeRow[]): Implied {
  const ordered = [...trades].sort(
    (a, b) =>
      a.at.getTime() - b.at.getTime() || (a.trade_id < b.trade_id ? -1 : a.trade_id > b.trade_id ? 1 : 0),
  );
  const held = new Map<string, { wallet: string; outcome: number; shares: bigint; wagered: bigint }>();
  const position = (wallet: string, outcome: number) => {
    const k = `${wallet}:${outcome}`;
    const p = held.get(k) ?? { wallet, outcome, shares: 0n, wagered: 0n };
    held.set(k, p);
    return p;
  };
  const traders = new Set<string>();
  for (const t of ordered) {
    const shares = BigInt(t.shares);
    const buyer = position(t.buyer, t.outcome_index);
    buyer.shares += shares;
    buyer.wagered += (shares * BigInt(t.price)) / 10_000n;
    const seller = held.get(`${t.seller}:${t.outcome_index}`);
    if (seller) seller.shares = seller.shares > shares ? seller.shares - shares : 0n;
    traders.add(t.buyer).add(t.seller);
  }
  const outcomes = new Map<number, { positions: number; shares: bigint; wagered: bigint }>();
  const holders = new Set<string>();
  for (const p of held.values()) {
    if (p.shares === 0n) continue;
    holders.add(p.wallet);
    const o = outcomes.get(p.outcome) ?? { positions: 0, shares: 0n, wagered: 0n };
    o.positions += 1;
    o.shares += p.shares;
    o.wagered += p.wagered;
    outcomes.set(p.outcome, o);
  }
  return {
    trades: ordered.length,
    outcomes,
    holders: holders.size,
    bettors: new Set([...traders, ...holders]).size,
  };
}

const get = async (url: string) => {
  const answer = await ctx.request(key, { method: 'GET', url });
  expect(answer.statusCode, url).toBe(200);
  return answer.json();
};

let byMarket: Map<string, Implied>;

beforeAll(async () => {
  ctx = await createTestContext();
  // What a first start does: the sandbox starter account and the demo markets.
  const welcome = await createWelcome(ctx.database.db, ctx.clock, clearSecretBox);
  expect(welcome.demoMarkets).toBeGreaterThan(30);
  key = welcome.key;
  const rows = await ctx.database.db.query<TradeRow>(
    `SELECT market_id, trade_id, outcome_index, price, shares::text AS shares, buyer, seller, at
       FROM market_trades WHERE market_id LIKE 'demo-1-%'`,
  );
  const trades = new Map<string, TradeRow[]>();
  for (const r of rows) trades.set(r.market_id, [...(trades.get(r.market_id) ?? []), r]);
  byMarket = new Map([...trades].map(([id, list]) => [id, implied(list)]));
}, 120_000);
afterAll(async () => {
  await ctx.close();
});

describe('the demo markets', () => {
  it('answer the positions, holders and bettors their trades imply, market by market', async () => {
    const list = await get('/api/v1/markets?pageSize=100');
    expect(list.total).toBeGreaterThan(30);
    expect(list.markets).toHaveLength(list.total);
    const mismatches: string[] = [];
    for (const { id } of list.markets as { id: string }[]) {
      const want = byMarket.get(id);
      expect(want, `${id} has trades`).toBeDefined();
      if (!want) continue;
      const detail = await get(`/api/v1/markets/${id}`);
      const got = {
        trades: detail.tradingStats.totalTrades,
        bettors: detail.tradingStats.totalBettors,
        holders: detail.positionStats.uniqueHolders,
        positions: detail.positionStats.totalPositions,
        outcomes: detail.outcomes.map((o: { totalShares: string; totalWagered: string }) => [
          o.totalShares,
          o.totalWagered,
        ]),
      };
      const expected = {
        trades: want.trades,
        bettors: want.bettors,
        holders: want.holders,
        positions: [...want.outcomes.values()].reduce((n, o) => n + o.positions, 0),
        outcomes: detail.outcomes.map((o: { index: number }) => {
          const w = want.outcomes.get(o.index);
          return [String(w?.shares ?? 0n), String(w?.wagered ?? 0n)];
        }),
      };
      if (JSON.stringify(got) !== JSON.stringify(expected))
        mismatches.push(`${id}: answered ${JSON.stringify(got)}, trades imply ${JSON.stringify(expected)}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('list by bettors in the order the trades imply (most first, ties by id, descending)', async () => {
    const list = await get('/api/v1/markets?pageSize=100&sort=bettors');
    const expected = [...byMarket.entries()]
      .filter(([id]) => (list.markets as { id: string }[]).some((m) => m.id === id))
      .sort(([a, x], [b, y]) => y.bettors - x.bettors || (a < b ? 1 : -1))
      .map(([id]) => id);
    expect(list.markets.map((m: { id: string }) => m.id)).toEqual(expected);
  });

  it('differ in bettors, so that order has something to show (no count shared by a fifth of them)', () => {
    const counts = [...byMarket.values()].map((m) => m.bettors);
    const shared = new Map<number, number>();
    for (const n of counts) shared.set(n, (shared.get(n) ?? 0) + 1);
    expect(counts.length).toBeGreaterThan(30);
    expect(Math.max(...shared.values())).toBeLessThanOrEqual(Math.ceil(counts.length / 5));
    expect(shared.size).toBeGreaterThanOrEqual(counts.length / 2);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(3 * Math.min(...counts));
  });
});
