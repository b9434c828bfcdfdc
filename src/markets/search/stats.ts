import type { Queryable } from '../../db/database.js';
import { statement } from '../../db/database.js';
import { outcomeProbabilities, round6 } from '../../lib/probability.js';
import { toSol } from '../read/detail.js';

/**
 * The extension fields of list items (docs/markets.md#list-fields): each outcome's last price and
 * probability (the detail's rules), and the market's volume, 24-hour volume and liquidity, read for
 * the markets of one page at once.
 */

/** Per market: all-time volume (kept by ingestion in market_trade_totals), lamports as text. */
const PAGE_TOTALS = statement(
  'markets_list_totals',
  `SELECT market_id AS id, floor(notional / 10000)::text AS volume
     FROM market_trade_totals WHERE market_id = ANY($1::text[])`,
);

/**
 * Per outcome: its last trade's price (kept by ingestion, migration 0037), its best bid and ask (null
 * when none), and the notional (shares × price, basis points × base units) of its trades since $2 and
 * of its open orders. Every aggregate is a lateral per (market, outcome), so each reads its own index
 * range (market_trades_last, market_orders_book) whatever the statistics say: as correlated subqueries
 * per market, a generic plan estimated `market_id = m.id` from the one market holding most rows and
 * scanned every recent trade and every open order once per market of the page (190 ms for a page of
 * 50 against 0.9 ms this way, docs/performance.md#markets).
 */
const PAGE_OUTCOMES = statement(
  'markets_list_outcomes',
  `SELECT o.market_id, o.outcome_index, lp.price AS last_price, b.best_bid, b.best_ask,
          COALESCE(v.notional, 0)::text AS day_notional, COALESCE(b.notional, 0)::text AS open_notional
     FROM market_outcomes o
     LEFT JOIN market_outcome_last lp ON lp.market_id = o.market_id AND lp.outcome_index = o.outcome_index
     LEFT JOIN LATERAL (
       SELECT sum(t.shares::numeric * t.price) AS notional FROM market_trades t
        WHERE t.market_id = o.market_id AND t.outcome_index = o.outcome_index AND t.at > $2
     ) v ON true
     LEFT JOIN LATERAL (
       SELECT max(price) FILTER (WHERE side = 'bid') AS best_bid, min(price) FILTER (WHERE side = 'ask') AS best_ask,
              sum(open_shares::numeric * price) AS notional
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
  const [totals, outcomes] = await Promise.all([
    db.query<{ id: string; volume: string }>(PAGE_TOTALS, [ids]),
    db.query<{
      market_id: string;
      outcome_index: number;
      last_price: number | null;
      best_bid: number | null;
      best_ask: number | null;
      day_notional: string;
      open_notional: string;
    }>(PAGE_OUTCOMES, [ids, since]),
  ]);
  const byMarket = new Map<string, typeof outcomes>();
  for (const row of outcomes) {
    const list = byMarket.get(row.market_id) ?? [];
    list.push(row);
    byMarket.set(row.market_id, list);
  }
  const volumeOf = new Map(totals.map((t) => [t.id, t.volume]));
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
    result.set(id, {
      outcomes: raw.map((o, index) => ({ lastPrice: o.lastPrice, probability: probability[index] ?? 0 })),
      volume: volumeOf.get(id) ?? '0',
      volume24h: lamportsOf(rows, 'day_notional'),
      liquidity: lamportsOf(rows, 'open_notional'),
    });
  }
  return result;
}

/** The sum of the outcomes' notionals in lamports (÷ 10,000, floored), as text. */
function lamportsOf(
  rows: readonly Record<'day_notional' | 'open_notional', string>[],
  column: 'day_notional' | 'open_notional',
): string {
  let notional = 0n;
  for (const row of rows) notional += BigInt(row[column]);
  return (notional / 10_000n).toString();
}

/** Lamports in USD at `solUsd`, as the detail computes its …Usd fields; null without a SOL price. */
export function lamportsUsd(lamports: string, solUsd: number | null): number | null {
  return solUsd === null ? null : round6(toSol(lamports) * solUsd);
}
