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

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * Each outcome's probability by the rule of docs/markets.md (as GET /markets/{id} computes it; the
 * market stream's tests compare the two): the mid of its best bid and ask when it has both, else its
 * last trade price, else 1 ÷ outcomes; scaled to sum to 1; 6 decimals.
 */
function probabilities(outcomes: OutcomeStateRow[]): number[] {
  const n = outcomes.length;
  const raw = outcomes.map((o) => {
    if (o.bestBid !== null && o.bestAsk !== null) return (o.bestBid + o.bestAsk) / 2 / 10_000;
    if (o.lastPrice !== null) return o.lastPrice / 10_000;
    return 1 / n;
  });
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((r) => round6(sum > 0 ? r / sum : 1 / n));
}

export function marketState(row: MarketStateRow): MarketState {
  const outcomes = row.outcomes ?? [];
  const probability = probabilities(outcomes);
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
