import type { Queryable } from '../../db/database.js';
import { statement } from '../../db/database.js';
import { outcomeProbabilities, round6 } from '../../lib/probability.js';
import { toSol } from '../read/detail.js';

/**
 * The extension fields of list items (docs/markets.md#list-fields): each outcome's last price and
 * probability (the detail's rules), and the market's volume, 24-hour volume and liquidity, read for
 * the markets of one page at once.
 */

/** Per market: all-time volume, the last 24 hours' (since $2), open orders' value; lamports as text. */
const PAGE_STATS = statement(
  'markets_list_stats',
  `SELECT m.id,
          floor(COALESCE(tt.notional, 0) / 10000)::text AS volume,
          (SELECT floor(COALESCE(sum(x.shares::numeric * x.price), 0) / 10000)::text
             FROM market_trades x WHERE x.market_id = m.id AND x.at > $2) AS volume24h,
          (SELECT floor(COALESCE(sum(o.open_shares::numeric * o.price), 0) / 10000)::text
             FROM market_orders o WHERE o.market_id = m.id AND o.open_shares > 0) AS liquidity
     FROM unnest($1::text[]) AS m (id)
     LEFT JOIN market_trade_totals tt ON tt.market_id = m.id`,
);

/** Per outcome: its last trade's price and its best bid and ask (null when none). */
const PAGE_OUTCOMES = statement(
  'markets_list_outcomes',
  `SELECT o.market_id, o.outcome_index, lp.price AS last_price, b.best_bid, b.best_ask
     FROM market_outcomes o
     LEFT JOIN LATERAL (
       SELECT t.price FROM market_trades t
        WHERE t.market_id = o.market_id AND t.outcome_index = o.outcome_index
        ORDER BY t.at DESC, t.trade_id DESC LIMIT 1
     ) lp ON true
     LEFT JOIN LATERAL (
       SELECT max(price) FILTER (WHERE side = 'bid') AS best_bid, min(price) FILTER (WHERE side = 'ask') AS best_ask
         FROM market_orders b
        WHERE b.market_id = o.market_id AND b.outcome_index = o.outcome_index AND b.open_shares > 0
     ) b ON true
    WHERE o.market_id = ANY($1::text[])`,
);

export interface ItemStats {
  outcomes: { lastPrice: number | null; probability: number }[];
  volume: string;
  volume24h: string;
  liquidity: string;
}

/** The statistics of the given markets, by id. */
export async function pageStats(
  db: Queryable,
  markets: readonly { id: string; outcomeCount: number }[],
  now: Date,
): Promise<Map<string, ItemStats>> {
  const ids = markets.map((m) => m.id);
  const result = new Map<string, ItemStats>();
  if (ids.length === 0) return result;
  const since = new Date(now.getTime() - 86_400_000).toISOString();
  const [stats, outcomes] = await Promise.all([
    db.query<{ id: string; volume: string; volume24h: string; liquidity: string }>(PAGE_STATS, [ids, since]),
    db.query<{
      market_id: string;
      outcome_index: number;
      last_price: number | null;
      best_bid: number | null;
      best_ask: number | null;
    }>(PAGE_OUTCOMES, [ids]),
  ]);
  const byMarket = new Map<string, typeof outcomes>();
  for (const row of outcomes) {
    const list = byMarket.get(row.market_id) ?? [];
    list.push(row);
    byMarket.set(row.market_id, list);
  }
  const statsOf = new Map(stats.map((s) => [s.id, s]));
  for (const { id, outcomeCount } of markets) {
    const rows = byMarket.get(id) ?? [];
    const raw = Array.from({ length: outcomeCount }, (_, index) => {
      const row = rows.find((r) => r.outcome_index === index);
      return {
        bestBid: row?.best_bid ?? null,
        bestAsk: row?.best_ask ?? null,
        lastPrice: row?.last_price ?? null,
      };
    });
    const probability = outcomeProbabilities(raw);
    const s = statsOf.get(id);
    result.set(id, {
      outcomes: raw.map((o, index) => ({ lastPrice: o.lastPrice, probability: probability[index] ?? 0 })),
      volume: s?.volume ?? '0',
      volume24h: s?.volume24h ?? '0',
      liquidity: s?.liquidity ?? '0',
    });
  }
  return result;
}

/** Lamports in USD at `solUsd`, as the detail computes its …Usd fields; null without a SOL price. */
export function lamportsUsd(lamports: string, solUsd: number | null): number | null {
  return solUsd === null ? null : round6(toSol(lamports) * solUsd);
}
