import type { MarketQuestion, MarketSource } from '../../ai/index.js';
import { queryable } from '../../context.js';

/**
 * Where `POST /ai/resolve { marketId }` finds its market: by id or slug, with its title as the
 * question, its outcome labels and its description; sandbox markets resolve with the sandbox models.
 */
export const marketSource: MarketSource = {
  async find(ctx, marketId) {
    const db = queryable(ctx);
    const [market] = await db.query<{ id: string; title: string; description: string; sandbox: boolean }>(
      `SELECT id, title, description, sandbox FROM markets
        WHERE (id = $1 OR slug = $1) AND status <> 'DRAFT' ORDER BY id = $1 DESC LIMIT 1`,
      [marketId],
    );
    if (!market) return null;
    const outcomes = await db.query<{ label: string }>(
      'SELECT label FROM market_outcomes WHERE market_id = $1 ORDER BY outcome_index',
      [market.id],
    );
    const question: MarketQuestion = {
      id: market.id,
      question: market.title,
      outcomes: outcomes.map((o) => o.label),
      context: market.description,
      mode: market.sandbox ? 'sandbox' : 'live',
    };
    return question;
  },
};
