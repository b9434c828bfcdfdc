import { type Context, queryable, type TxContext, withTransaction } from '../context.js';
import type { Queryable } from '../db/database.js';
import { AppError, type ValidationProblem, validationError } from '../errors.js';
import { formatUsd, parseUsd } from '../lib/money.js';
import * as sql from './sql.js';

/** Most low-balance thresholds an account sets. */
export const MAX_LOW_BALANCE_THRESHOLDS = 3;

/** The account's balance alerts (docs/webhooks.md#balance-alerts): its low-balance thresholds, highest first. */
export interface AlertSettings {
  lowBalanceUsd: string[];
}

interface SettingsRow {
  mode: string;
  low_balance_micros: (bigint | string)[] | null;
}

function present(row: SettingsRow): AlertSettings {
  // An int8[] comes back as text from one adapter and as bigints from the other.
  const micros =
    row.low_balance_micros?.map((v) => BigInt(v)) ??
    (row.mode === 'live' ? [sql.DEFAULT_LOW_BALANCE_MICROS] : []);
  return { lowBalanceUsd: [...micros].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)).map(formatUsd) };
}

export async function getAlertSettings(ctx: Context, accountId: string): Promise<AlertSettings> {
  const [row] = await queryable(ctx).query<SettingsRow>(sql.ALERT_SETTINGS, [accountId]);
  if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return present(row);
}

/**
 * Replaces the account's low-balance thresholds: at most 3 distinct positive USD amounts (money as
 * strings); an empty list turns the alerts off. A threshold set above the balance is not armed: it
 * fires once the balance has been at or above it and falls below it again.
 */
export async function setAlertSettings(
  ctx: Context,
  accountId: string,
  input: { lowBalanceUsd: readonly string[] },
): Promise<AlertSettings> {
  const micros = parseThresholds(input.lowBalanceUsd);
  const [row] = await queryable(ctx).query<SettingsRow>(sql.SET_ALERT_SETTINGS, [
    accountId,
    micros.map(String),
  ]);
  if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return present(row);
}

/** The thresholds in micro-USD, or 400 VALIDATION_ERROR naming every problem. */
export function parseThresholds(values: readonly string[]): bigint[] {
  const problems: ValidationProblem[] = [];
  if (values.length > MAX_LOW_BALANCE_THRESHOLDS) {
    problems.push({
      path: 'body.lowBalanceUsd',
      message: `must hold at most ${MAX_LOW_BALANCE_THRESHOLDS} thresholds`,
    });
  }
  const seen = new Set<bigint>();
  const micros: bigint[] = [];
  values.forEach((value, i) => {
    const path = `body.lowBalanceUsd[${i}]`;
    const amount = /^\d+\.\d{2,6}$/.test(value) ? parseUsd(value) : null;
    if (amount === null) {
      problems.push({
        path,
        message: 'must be a positive USD amount with 2 to 6 fraction digits, e.g. "5.00"',
      });
    } else if (amount <= 0n) {
      problems.push({ path, message: 'must be more than 0.00' });
    } else if (seen.has(amount)) {
      problems.push({ path, message: `repeats ${formatUsd(amount)}` });
    } else {
      seen.add(amount);
      micros.push(amount);
    }
  });
  if (problems.length > 0) throw validationError(problems);
  return micros;
}

/**
 * A paid request was refused with 402 INSUFFICIENT_BALANCE: the first refusal since the account was
 * last credited writes its `depleted` alert (one statement, matching no row once disarmed). Run by
 * the HTTP edge after the request's own transaction, if any, rolled back. True when it fired.
 */
export async function noteRefusal(db: Queryable, accountId: string): Promise<boolean> {
  const rows = await db.query(sql.DEPLETED, [accountId]);
  return rows.length > 0;
}

/** An alert as its event carries it (docs/webhooks.md#event-catalog). */
export type BalanceAlert = {
  accountId: string;
  mode: 'live' | 'sandbox';
  /**
   * The event's time: the emitter's clock when it records the event (a second or so after the
   * crossing, which its alert row keeps), so that its delivery is due by the clock the worker runs on.
   */
  createdAt: Date;
} & (
  | { type: 'balance.low'; data: { thresholdUsd: string; balanceUsd: string; accountId: string } }
  | { type: 'balance.depleted'; data: { balanceUsd: string; accountId: string } }
);

/** Records one alert's event in the transaction given (the events' verb, `recordAccountEvent`). */
export type AlertRecorder = (tx: Queryable, alert: BalanceAlert) => Promise<void>;

interface AlertRow {
  id: bigint;
  account_id: string;
  mode: 'live' | 'sandbox';
  kind: 'low' | 'depleted';
  threshold_micros: bigint | null;
  balance_micros: bigint;
}

/**
 * Hands the alerts whose event is not recorded yet to `record`, at most `limit` of them, each once:
 * they are claimed (a concurrent run skips them) and marked in the transaction in which `record`
 * writes their events, so a failure records none of them and the next run tries again. Answers how
 * many were recorded.
 */
export async function emitBalanceAlerts(ctx: Context, record: AlertRecorder, limit = 100): Promise<number> {
  return withTransaction(ctx, async (tx: TxContext) => {
    const rows = await tx.tx.query<AlertRow>(sql.CLAIM_ALERTS, [limit]);
    const now = ctx.clock.now();
    for (const row of rows) await record(tx.tx, alertOf(row, now));
    if (rows.length > 0) {
      await tx.tx.query(sql.MARK_ALERTS_EMITTED, [rows.map((r) => r.id), now]);
    }
    return rows.length;
  });
}

function alertOf(row: AlertRow, now: Date): BalanceAlert {
  const balanceUsd = formatUsd(row.balance_micros);
  const common = { accountId: row.account_id, mode: row.mode, createdAt: now };
  return row.kind === 'low' && row.threshold_micros !== null
    ? {
        ...common,
        type: 'balance.low',
        data: { thresholdUsd: formatUsd(row.threshold_micros), balanceUsd, accountId: row.account_id },
      }
    : { ...common, type: 'balance.depleted', data: { balanceUsd, accountId: row.account_id } };
}
