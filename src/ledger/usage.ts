import { type Context, queryable } from '../context.js';
import { type ValidationProblem, validationError } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import { parseIsoTimestamp } from '../lib/time.js';
import * as sql from './sql.js';

export type UsageGrouping = 'day' | 'operation' | 'key';

export interface UsageQuery {
  from?: string | undefined;
  to?: string | undefined;
  groupBy?: UsageGrouping | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest range a report covers: a year, leap day included. */
export const MAX_USAGE_DAYS = 366;
/** Without `from`: the last 30 days, today included. */
const DEFAULT_DAYS = 30;

interface UsageRow {
  grp: string;
  requests: bigint;
  charged: bigint;
  refunded: bigint;
}

interface Figures {
  requests: bigint;
  charged: bigint;
  refunded: bigint;
}

/**
 * The names of the account's keys among `ids`: the keys room's (its door's `keyNames`), which sits
 * above the ledger, so it is handed in (src/ports.ts, the dashboard). One query per report.
 */
export type KeyNames = (ctx: Context, accountId: string, ids: string[]) => Promise<Map<string, string>>;

/**
 * `GET /account/usage` and the dashboard's usage page: billed requests and spend over a range,
 * grouped by UTC day, operation or key, computed from the ledger (the one record of what was
 * charged and refunded); grouped by key, each named by `names`.
 */
export async function accountUsage(ctx: Context, names: KeyNames, accountId: string, query: UsageQuery) {
  const now = ctx.clock.now();
  const groupBy = query.groupBy ?? 'day';
  const problems: ValidationProblem[] = [];
  const to = readBound(query.to, 'query.to', problems) ?? now;
  const from =
    readBound(query.from, 'query.from', problems) ??
    new Date(startOfUtcDay(to.getTime() - 1).getTime() - (DEFAULT_DAYS - 1) * DAY_MS);
  if (problems.length === 0 && from.getTime() >= to.getTime()) {
    problems.push({ path: 'query.from', message: 'must be before query.to' });
  }
  if (problems.length === 0 && to.getTime() - from.getTime() > MAX_USAGE_DAYS * DAY_MS) {
    problems.push({ path: 'query.from', message: `must be at most ${MAX_USAGE_DAYS} days before query.to` });
  }
  if (problems.length > 0) throw validationError(problems);

  const rows = await queryable(ctx).query<UsageRow>(sql.USAGE, [accountId, from, to, groupBy]);
  const groups = new Map(rows.map((row) => [row.grp, row as Figures]));
  const keyNames =
    groupBy === 'key' ? await names(ctx, accountId, [...groups.keys()]) : new Map<string, string>();
  const order =
    groupBy === 'day'
      ? daysBetween(from, to)
      : [...groups.keys()].sort((a, b) => {
          const spend = (g: string) => spendOf(groups.get(g) as Figures);
          return spend(b) > spend(a) ? 1 : spend(b) < spend(a) ? -1 : a.localeCompare(b);
        });
  const totals = rows.reduce<Figures>(
    (sum, row) => ({
      requests: sum.requests + row.requests,
      charged: sum.charged + row.charged,
      refunded: sum.refunded + row.refunded,
    }),
    { requests: 0n, charged: 0n, refunded: 0n },
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    groupBy,
    totals: present(totals),
    rows: order.map((group) => ({
      group,
      label: keyNames.get(group) ?? null,
      ...present(groups.get(group) ?? { requests: 0n, charged: 0n, refunded: 0n }),
    })),
  };
}

function spendOf(f: Figures): bigint {
  return f.charged - f.refunded;
}

function present(f: Figures) {
  return {
    requests: Number(f.requests),
    chargedUsd: formatUsd(f.charged),
    refundedUsd: formatUsd(f.refunded),
    spendUsd: formatUsd(spendOf(f)),
  };
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** An ISO 8601 timestamp with a zone, or a date meaning that UTC day's midnight. */
function readBound(text: string | undefined, path: string, problems: ValidationProblem[]): Date | null {
  if (text === undefined) return null;
  const at = parseIsoTimestamp(DATE_PATTERN.test(text) ? `${text}T00:00:00Z` : text);
  if (!at) {
    problems.push({
      path,
      message: 'must be an ISO 8601 timestamp with a zone or a date, e.g. 2026-11-23T00:00:00Z or 2026-11-23',
    });
  }
  return at;
}

function startOfUtcDay(ms: number): Date {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS);
}

/** Every UTC day that [from, to) touches, oldest first. */
function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let day = startOfUtcDay(from.getTime()).getTime(); day < to.getTime(); day += DAY_MS) {
    days.push(new Date(day).toISOString().slice(0, 10));
  }
  return days;
}
