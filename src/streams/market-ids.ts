import type { Database } from '../db/database.js';
import { AppError, type ValidationProblem } from '../errors.js';
import { MarketLogReader } from '../markets/index.js';
import { MARKET_ID_PATTERN, MAX_STREAM_MARKETS } from './schemas.js';

const MARKET_ID = new RegExp(MARKET_ID_PATTERN);
const ECHO = 64;

/**
 * The `ids` of a market stream (docs/streams.md#markets): 1 to 50 comma-separated market ids; more,
 * or a malformed one (an empty one included), is 400 VALIDATION_ERROR listing each; duplicates
 * collapse into the first. Then each must be a market GET /markets/{id} answers (not DRAFT): one
 * that is not is 404 NOT_FOUND naming it — the stream is refused, not opened to report it. All of it
 * before anything is taken or charged.
 */
export async function streamedMarkets(db: Database, text: string): Promise<string[]> {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_STREAM_MARKETS) {
    throw new AppError(
      'VALIDATION_ERROR',
      `A market stream takes at most ${MAX_STREAM_MARKETS} markets (got ${entries.length})`,
      {
        details: {
          problems: [{ path: 'query.ids', message: `must list at most ${MAX_STREAM_MARKETS} market ids` }],
        },
      },
    );
  }
  const problems: ValidationProblem[] = [];
  entries.forEach((entry, i) => {
    if (!MARKET_ID.test(entry))
      problems.push({ path: `query.ids[${i}]`, message: `"${entry.slice(0, ECHO)}" is not a market id` });
  });
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Some ids are not market ids', { details: { problems } });
  const ids = [...new Set(entries)];
  const known = await new MarketLogReader(db).streamable(ids);
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw new AppError('NOT_FOUND', `Market ${unknown} not found`);
  return ids;
}
