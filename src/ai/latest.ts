import { type Context, queryable } from '../context.js';
import { statement } from '../db/database.js';

/** The last completed AI resolution asked about a market (`POST /ai/resolve { marketId }`). */
const LATEST_FOR_MARKET = statement(
  'ai_latest_for_market',
  `SELECT result, completed_at FROM ai_requests
    WHERE market_id = $1 AND status = 'COMPLETED' ORDER BY completed_at DESC LIMIT 1`,
);

/** A completed resolution's consensus and when it completed. */
export interface CompletedResolution {
  result: Record<string, unknown>;
  completedAt: Date;
}

/**
 * The last completed `POST /ai/resolve { marketId }` about a market, or null: what a market's detail
 * shows as its AI prediction (with the lifecycle's own resolution, whichever is newer).
 */
export async function latestMarketResolution(
  ctx: Context,
  marketId: string,
): Promise<CompletedResolution | null> {
  const [row] = await queryable(ctx).query<{ result: Record<string, unknown>; completed_at: Date }>(
    LATEST_FOR_MARKET,
    [marketId],
  );
  return row ? { result: row.result, completedAt: row.completed_at } : null;
}
