import { type Context, withTransaction } from '../../context.js';
import type { Queryable } from '../../db/database.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { type MarketStatus, toMicros } from '../ingest/events.js';
import { recordMarketChanges } from '../log/market-log.js';
import { listedMarketsChanged } from '../read/list-cache.js';

/**
 * Market status transitions and resolutions: the one place that changes them, whoever asks — the
 * platform through ingestion, the administrator through the CLI, and (later) the lifecycle worker.
 * Every change that moves the status is appended to `resolution.details.transitions`.
 */

/** Who made a change, as `resolution.details` records it. */
export type Actor = 'platform' | 'admin' | 'lifecycle';

export interface StatusChange {
  marketId: string;
  status: MarketStatus;
  /** When the change happened, to the microsecond (see `toMicros`). */
  at: string;
  /** The ingestion event, or a synthetic id for the administrator and the worker. */
  eventId: string;
  by: Actor;
}

// (at, event id) decides which of two changes is newer, so the result does not depend on the order
// in which they arrive. The transition is logged only when the status actually changes.
const APPLY_STATUS = `
  UPDATE markets
     SET status = $2, status_at = $3, status_event = $4,
         resolution_details = CASE WHEN status = $2 THEN resolution_details ELSE
           jsonb_set(COALESCE(resolution_details, '{}'::jsonb), '{transitions}',
             COALESCE(resolution_details -> 'transitions', '[]'::jsonb)
               || jsonb_build_array(jsonb_build_object('from', status, 'to', $2::text, 'at', $5::text,
                                                       'by', $6::text, 'eventId', $4::text))) END
   WHERE id = $1 AND (status_at, status_event) < ($3::timestamptz, $4::text)
  RETURNING id`;

const APPLY_RESOLUTION = `
  UPDATE markets
     SET winning_outcome_index = $2, resolved_at = $3, resolution_at = $3, resolution_event = $4,
         resolution_details = COALESCE(resolution_details, '{}'::jsonb) || $5::jsonb
   WHERE id = $1 AND (resolution_at IS NULL OR (resolution_at, resolution_event) < ($3::timestamptz, $4::text))
  RETURNING id`;

/** Applies a status change unless a newer one is already stored; false when it was not newer. */
export async function applyStatus(q: Queryable, change: StatusChange): Promise<boolean> {
  const rows = await q.query(APPLY_STATUS, [
    change.marketId,
    change.status,
    change.at,
    change.eventId,
    // Shown like every other timestamp of the API (milliseconds); compared to the microsecond.
    new Date(Date.parse(change.at)).toISOString(),
    change.by,
  ]);
  return rows.length > 0;
}

export interface Resolution {
  marketId: string;
  winningOutcomeIndex: number;
  at: string;
  eventId: string;
  by: Actor;
  /** Merged into `resolution.details` next to `resolvedBy`. */
  details: Record<string, unknown>;
}

/**
 * Records the winning outcome (unless a newer resolution is stored) and moves the market to
 * FINALIZED (unless a newer status is stored): a resolution followed by a later cancellation stays
 * cancelled, with the resolution still on record.
 */
export async function applyResolution(
  q: Queryable,
  resolution: Resolution,
): Promise<{ recorded: boolean; finalized: boolean }> {
  const recorded = await q.query(APPLY_RESOLUTION, [
    resolution.marketId,
    resolution.winningOutcomeIndex,
    resolution.at,
    resolution.eventId,
    JSON.stringify({ resolvedBy: resolution.by, ...resolution.details }),
  ]);
  const finalized = await applyStatus(q, {
    marketId: resolution.marketId,
    status: 'FINALIZED',
    at: resolution.at,
    eventId: resolution.eventId,
    by: resolution.by,
  });
  return { recorded: recorded.length > 0, finalized };
}

/** Statuses from which an administrator may resolve a market. */
const RESOLVABLE: readonly MarketStatus[] = ['OPEN', 'CLOSED', 'RESOLVING'];

export interface AdminResolution {
  marketId: string;
  status: MarketStatus;
  winningOutcomeIndex: number;
  winningOutcomeLabel: string;
  resolvedAt: string;
}

/**
 * `sibyl markets resolve MARKET_ID OUTCOME`: the administrator names the winning outcome (by index
 * or label) of an OPEN, CLOSED or RESOLVING market, which becomes FINALIZED now.
 */
export async function resolveByAdmin(
  ctx: Context,
  input: { market: string; outcome: string },
): Promise<AdminResolution> {
  const resolved = await withTransaction(ctx, async ({ tx }): Promise<AdminResolution> => {
    const [market] = await tx.query<{
      id: string;
      status: MarketStatus;
      status_at: Date;
      resolution_at: Date | null;
    }>(
      `SELECT id, status, status_at, resolution_at FROM markets
        WHERE id = $1 OR slug = $1 ORDER BY id = $1 DESC LIMIT 1 FOR UPDATE`,
      [input.market],
    );
    if (!market) throw notFound(`Market ${input.market}`);
    const outcomes = await tx.query<{ outcome_index: number; label: string }>(
      'SELECT outcome_index, label FROM market_outcomes WHERE market_id = $1 ORDER BY outcome_index',
      [market.id],
    );
    const chosen =
      outcomes.find((o) => o.label === input.outcome) ??
      (/^\d+$/.test(input.outcome)
        ? outcomes.find((o) => o.outcome_index === Number(input.outcome))
        : undefined);
    if (!chosen) {
      throw validationError([
        {
          path: 'outcome',
          message: `must be an outcome index (0-${outcomes.length - 1}) or label of ${market.id}: ${outcomes.map((o) => o.label).join(', ')}`,
        },
      ]);
    }
    if (!RESOLVABLE.includes(market.status)) {
      throw validationError([
        {
          path: 'market',
          message: `is ${market.status}; only ${RESOLVABLE.join(', ')} markets can be resolved`,
        },
      ]);
    }
    const now = toMicros(ctx.clock.now().toISOString());
    const latest = Math.max(market.status_at.getTime(), market.resolution_at?.getTime() ?? 0);
    if (!now || latest >= ctx.clock.now().getTime()) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Market ${market.id} has a status change or resolution dated now or in the future`,
        { details: { latestChangeAt: new Date(latest).toISOString() } },
      );
    }
    const eventId = `admin:${now.iso}`;
    const applied = await applyResolution(tx, {
      marketId: market.id,
      winningOutcomeIndex: chosen.outcome_index,
      at: now.iso,
      eventId,
      by: 'admin',
      details: { outcomeLabel: chosen.label },
    });
    // The row is locked and its last change is older than now, so both parts apply.
    if (!applied.recorded || !applied.finalized) throw new Error(`resolution of ${market.id} did not apply`);
    await recordMarketChanges(tx, { marketIds: [market.id] }); // the market stream (docs/streams.md#markets)
    return {
      marketId: market.id,
      status: 'FINALIZED',
      winningOutcomeIndex: chosen.outcome_index,
      winningOutcomeLabel: chosen.label,
      resolvedAt: new Date(Date.parse(now.iso)).toISOString(),
    };
  });
  // The pool names this process's list caches (no query): they drop their entries.
  listedMarketsChanged(ctx.db);
  return resolved;
}
