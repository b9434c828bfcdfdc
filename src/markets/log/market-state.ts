import { outcomeProbabilities } from '../../lib/probability.js';

/**
 * What a `market` event says of a market (docs/streams.md#markets), built from one row of the state
 * query (market-sql.ts): the part of GET /markets/{id} that moves — status, each outcome's last
 * trade price and probability, the trade totals — and the resolution once there is one.
 */

export interface OutcomeStateRow {
  index: number;
  label: string;
  lastPrice: number | null;
  bestBid: number | null;
  bestAsk: number | null;
}

export interface MarketStateRow {
  id: string;
  status: string;
  winning_outcome_index: number | null;
  resolved_at: Date | null;
  trades: number;
  volume: string;
  outcomes: OutcomeStateRow[] | null;
}

export interface MarketState {
  id: string;
  status: string;
  outcomes: { index: number; label: string; lastPrice: number | null; probability: number }[];
  tradingStats: { totalVolume: string; totalTrades: number };
  resolution: { winningOutcomeIndex: number; resolvedAt: string | null } | null;
}

export function marketState(row: MarketStateRow): MarketState {
  const outcomes = row.outcomes ?? [];
  // The rule of docs/markets.md, the one GET /markets/{id} applies (lib/probability.ts).
  const probability = outcomeProbabilities(outcomes);
  return {
    id: row.id,
    status: row.status,
    outcomes: outcomes.map((o, i) => ({
      index: o.index,
      label: o.label,
      lastPrice: o.lastPrice,
      probability: probability[i] ?? 0,
    })),
    tradingStats: { totalVolume: row.volume, totalTrades: row.trades },
    resolution:
      row.winning_outcome_index === null
        ? null
        : {
            winningOutcomeIndex: row.winning_outcome_index,
            resolvedAt: row.resolved_at ? new Date(row.resolved_at).toISOString() : null,
          },
  };
}
