import { type Context, queryable } from '../context.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { INSERT_SCORECARD, LATEST_SCORECARD } from './sql.js';
import type { ScorecardSummary } from './summary.js';

/**
 * Stores a summary as the published scorecard of its mode: the newest of a mode is what the keys
 * (and the dashboard) of that mode see (docs/ai.md#the-published-scorecard).
 */
export async function publishScorecard(db: Queryable, summary: ScorecardSummary) {
  const [row] = await db.query<{ id: string; published_at: Date }>(INSERT_SCORECARD, [
    summary.mode,
    JSON.stringify(summary),
  ]);
  if (!row) throw new Error('the scorecard was not stored');
  return { id: row.id, publishedAt: row.published_at.toISOString() };
}

/** The latest scorecard published for `mode`; 404 NOT_FOUND until one was. */
export async function latestScorecard(ctx: Context, mode: ScorecardSummary['mode']) {
  const [row] = await queryable(ctx).query<{ summary: ScorecardSummary; published_at: Date }>(
    LATEST_SCORECARD,
    [mode],
  );
  if (!row) throw new AppError('NOT_FOUND', 'No AI scorecard has been published yet');
  return { publishedAt: row.published_at.toISOString(), ...row.summary };
}
