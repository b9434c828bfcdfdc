import type { MarketFacts } from '../../ai/index.js';
import { type Context, queryable } from '../../context.js';
import { outcomeProbabilities } from '../../lib/probability.js';
import type { LevelRow, MarketRow } from './detail.js';
import * as sql from './sql.js';

/** How a market is decided, in a sentence (docs/markets.md#lifecycle). */
function resolutionRule(m: MarketRow): string {
  switch (m.resolution_type) {
    case 'PRICE_FEED': {
      const tolerance = m.price_tolerance ?? 0;
      const [yes, no] = m.price_condition === 'below' ? ['below', 'above'] : ['above', 'below'];
      const edge = (side: string) => (side === 'above' ? '+' : '−');
      return (
        `from the VWAP of ${m.price_symbol} once the market closes: outcome 0 when it is ${yes} ` +
        `${m.price_target} ${edge(yes)} ${tolerance} USD, outcome 1 when ${no} ${m.price_target} ` +
        `${edge(no)} ${tolerance} USD; inside that band, or with no valid price, an administrator decides`
      );
    }
    case 'AI':
      return 'the consensus of four AI models on the title and description, at the close';
    case 'ADMIN':
      return 'decided by an administrator after the close';
    case 'MANUAL_VOTE':
      return 'decided by a community vote after the close';
  }
}

/**
 * A market as the AI room's `sibyl_market` tool tells it (docs/ai.md#sibyls-tools): by id or slug,
 * drafts left out as `POST /ai/resolve { marketId }` leaves them; its probabilities by the rule of
 * the detail (the best bid and ask of each outcome, else its last trade price).
 */
export async function marketFacts(ctx: Context, idOrSlug: string): Promise<MarketFacts | null> {
  const db = queryable(ctx);
  const [m] = await db.query<MarketRow>(sql.MARKET, [idOrSlug]);
  if (!m || m.status === 'DRAFT') return null;
  const [levels, lastPrices] = await Promise.all([
    db.query<LevelRow>(sql.BOOK, [m.id, 1]),
    db.query<{ outcome_index: number; price: number | null }>(sql.LAST_PRICES, [m.id]),
  ]);
  const quotes = m.outcome_labels.map((_label, index) => {
    const best = (side: 'bid' | 'ask') =>
      levels.find((l) => l.outcome_index === index && l.side === side)?.price ?? null;
    return {
      bestBid: best('bid'),
      bestAsk: best('ask'),
      lastPrice: lastPrices.find((r) => r.outcome_index === index)?.price ?? null,
    };
  });
  const probability = outcomeProbabilities(quotes);
  return {
    id: m.id,
    title: m.title,
    status: m.status,
    outcomes: m.outcome_labels.map((label, index) => ({
      index,
      label,
      probability: probability[index] ?? 0,
    })),
    closesAt: m.closes_at.toISOString(),
    resolution: {
      type: m.resolution_type,
      rule: resolutionRule(m),
      winningOutcomeIndex: m.winning_outcome_index,
      resolvedAt: m.resolved_at?.toISOString() ?? null,
    },
    description: m.description,
  };
}
