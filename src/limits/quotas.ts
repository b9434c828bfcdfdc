import { type Context, queryable } from '../context.js';
import type { Queryable } from '../db/database.js';

/** Per-key quotas; null means unlimited. Spend caps are micro-USD. */
export interface QuotaLimits {
  dailyRequests: bigint | null;
  monthlyRequests: bigint | null;
  dailySpendMicros: bigint | null;
  monthlySpendMicros: bigint | null;
}

export const NO_QUOTAS: QuotaLimits = {
  dailyRequests: null,
  monthlyRequests: null,
  dailySpendMicros: null,
  monthlySpendMicros: null,
};

export function hasQuota(q: QuotaLimits): boolean {
  return (
    q.dailyRequests !== null ||
    q.monthlyRequests !== null ||
    q.dailySpendMicros !== null ||
    q.monthlySpendMicros !== null
  );
}

export type QuotaPeriod = 'day' | 'month';

export interface Periods {
  day: { start: string; resetsAt: Date };
  month: { start: string; resetsAt: Date };
}

/** The UTC calendar day and month containing `now`, and when each ends. */
export function periodsAt(now: Date): Periods {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const iso = (date: Date) => date.toISOString().slice(0, 10);
  return {
    day: { start: iso(new Date(Date.UTC(y, m, d))), resetsAt: new Date(Date.UTC(y, m, d + 1)) },
    month: { start: iso(new Date(Date.UTC(y, m, 1))), resetsAt: new Date(Date.UTC(y, m + 1, 1)) },
  };
}

// The guard is on the row being updated, so under READ COMMITTED a concurrent increment is waited
// for and the WHERE re-checked against the new counts: 300 concurrent requests against a quota of
// 100 leave exactly 100 through. The INSERT arm guards the very first request of a period.
const BUMP_USAGE = `
  INSERT INTO key_usage (lineage_id, period, period_start, requests, spend_micros)
  SELECT $1, $2, $3::date, 1, $4::bigint
   WHERE ($5::bigint IS NULL OR 1 <= $5::bigint) AND ($6::bigint IS NULL OR $4::bigint <= $6::bigint)
  ON CONFLICT (lineage_id, period, period_start) DO UPDATE
     SET requests = key_usage.requests + 1, spend_micros = key_usage.spend_micros + EXCLUDED.spend_micros
   WHERE ($5::bigint IS NULL OR key_usage.requests + 1 <= $5::bigint)
     AND ($6::bigint IS NULL OR key_usage.spend_micros + EXCLUDED.spend_micros <= $6::bigint)
  RETURNING requests`;

const READ_USAGE = `
  SELECT requests, spend_micros FROM key_usage WHERE lineage_id = $1 AND period = $2 AND period_start = $3::date`;

export interface QuotaRefusal {
  ok: false;
  reason: 'QUOTA_EXCEEDED';
  period: QuotaPeriod;
  /** Which limit: the number of requests, or the spend. */
  limit: 'requests' | 'spend';
  resetsAt: Date;
}

export interface QuotaContext {
  lineageId: string;
  limits: QuotaLimits;
  now: Date;
}

/**
 * Counts one request of `amountMicros` against the key lineage's day and month counters, in the
 * caller's transaction: guarded upserts, day row then month row (the one lock order of every charge,
 * taken before the account row). Returns the refusal when a limit would be passed; the caller must
 * then roll its transaction back, so a refused request never counts.
 */
export async function countAgainstQuotas(
  tx: Queryable,
  quota: QuotaContext,
  amountMicros: bigint,
): Promise<QuotaRefusal | null> {
  const periods = periodsAt(quota.now);
  const steps: [QuotaPeriod, bigint | null, bigint | null][] = [
    ['day', quota.limits.dailyRequests, quota.limits.dailySpendMicros],
    ['month', quota.limits.monthlyRequests, quota.limits.monthlySpendMicros],
  ];
  for (const [period, maxRequests, maxSpend] of steps) {
    const start = periods[period].start;
    const [row] = await tx.query(BUMP_USAGE, [
      quota.lineageId,
      period,
      start,
      amountMicros,
      maxRequests,
      maxSpend,
    ]);
    if (!row) {
      const limit = await whichLimit(tx, quota.lineageId, period, start, maxRequests);
      return { ok: false, reason: 'QUOTA_EXCEEDED', period, limit, resetsAt: periods[period].resetsAt };
    }
  }
  return null;
}

async function whichLimit(
  tx: Queryable,
  lineageId: string,
  period: QuotaPeriod,
  start: string,
  maxRequests: bigint | null,
): Promise<'requests' | 'spend'> {
  const [row] = await tx.query<{ requests: bigint }>(READ_USAGE, [lineageId, period, start]);
  const used = row?.requests ?? 0n;
  return maxRequests !== null && used + 1n > maxRequests ? 'requests' : 'spend';
}

export interface UsageNow {
  day: { periodStart: string; resetsAt: Date; requests: bigint; spendMicros: bigint };
  month: { periodStart: string; resetsAt: Date; requests: bigint; spendMicros: bigint };
}

/**
 * Current-period usage of several key lineages at once (for listing keys), in the periods `now` falls
 * in (the caller's reading of `ctx.clock`, which it also presents the keys at).
 */
export async function readUsage(
  ctx: Context,
  lineageIds: string[],
  now: Date,
): Promise<Map<string, UsageNow>> {
  const periods = periodsAt(now);
  const out = new Map<string, UsageNow>();
  for (const id of lineageIds) {
    out.set(id, {
      day: { periodStart: periods.day.start, resetsAt: periods.day.resetsAt, requests: 0n, spendMicros: 0n },
      month: {
        periodStart: periods.month.start,
        resetsAt: periods.month.resetsAt,
        requests: 0n,
        spendMicros: 0n,
      },
    });
  }
  if (lineageIds.length === 0) return out;
  const rows = await queryable(ctx).query<{
    lineage_id: string;
    period: QuotaPeriod;
    requests: bigint;
    spend_micros: bigint;
  }>(
    `SELECT lineage_id, period, requests, spend_micros FROM key_usage
      WHERE lineage_id = ANY($1::text[])
        AND ((period = 'day' AND period_start = $2::date) OR (period = 'month' AND period_start = $3::date))`,
    [lineageIds, periods.day.start, periods.month.start],
  );
  for (const row of rows) {
    const usage = out.get(row.lineage_id);
    if (!usage) continue;
    usage[row.period].requests = row.requests;
    usage[row.period].spendMicros = row.spend_micros;
  }
  return out;
}
