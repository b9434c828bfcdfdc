import type { AccountMode } from '../accounts/index.js';
import { type Context, queryable, withTransaction } from '../context.js';
import { AppError, validationError } from '../errors.js';
import { type PaidRow, type RowsWriter, refundCharge } from '../ledger/index.js';
import { parseIsoTimestamp } from '../lib/time.js';
import type { AiJobInput } from './ports.js';
import * as sql from './sql.js';

export type JobType = 'PRICE_RESOLUTION' | 'AI_RESOLUTION';
export type JobStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
export const JOB_STATUSES: readonly JobStatus[] = [
  'PENDING',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
];

/** A job can be cancelled until this long before it is due. */
export const CANCEL_CUTOFF_MS = 5 * 60 * 1000;
/** The furthest ahead a job can be scheduled. */
export const MAX_AHEAD_MS = 365 * 24 * 60 * 60 * 1000;

/** What a price check asks for: the token as it was scheduled. */
export interface PriceJobRequest {
  symbol: string;
}

/** A job's type and what it asks, stored in its `request` column: one shape per type. */
export type JobPayload =
  | { type: 'PRICE_RESOLUTION'; request: PriceJobRequest }
  | { type: 'AI_RESOLUTION'; request: AiJobInput };

/** A job row of each type, with the request of that type. */
export type JobRow = JobRowFields &
  (
    | { job_type: 'PRICE_RESOLUTION'; request: PriceJobRequest }
    | { job_type: 'AI_RESOLUTION'; request: AiJobInput }
  );

export type PriceJobRow = JobRow & { job_type: 'PRICE_RESOLUTION' };

interface JobRowFields {
  id: string;
  account_id: string;
  status: JobStatus;
  scheduled_for: Date;
  callback_url: string | null;
  mode: AccountMode;
  charge_entry_id: bigint;
  cost_micros: bigint;
  request_id: string;
  key_id: string | null;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  delivery_id: string | null;
  attempts: number;
  lease_token: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** True exactly when a cancel would succeed now: PENDING, and at least five minutes before it is due. */
export function canCancel(job: Pick<JobRow, 'status' | 'scheduled_for'>, now: Date): boolean {
  return job.status === 'PENDING' && now.getTime() <= job.scheduled_for.getTime() - CANCEL_CUTOFF_MS;
}

/**
 * When a job runs: ISO 8601 with a zone (else INVALID_TIMESTAMP), after now (else
 * TIMESTAMP_IN_PAST), at most 365 days ahead (else VALIDATION_ERROR).
 */
export function readScheduledFor(text: string, path: string, now: Date): Date {
  const at = parseIsoTimestamp(text);
  if (!at) {
    const problem = { path, message: 'is not an ISO 8601 timestamp with a zone (e.g. 2026-12-01T12:00:00Z)' };
    throw new AppError('INVALID_TIMESTAMP', `${path} ${problem.message}`, {
      details: { problems: [problem] },
    });
  }
  if (at.getTime() <= now.getTime()) {
    throw new AppError('TIMESTAMP_IN_PAST', `${path} must be in the future (now is ${now.toISOString()})`, {
      details: { problems: [{ path, message: 'is not in the future' }], now: now.toISOString() },
    });
  }
  if (at.getTime() - now.getTime() > MAX_AHEAD_MS) {
    throw validationError([{ path, message: 'is more than 365 days ahead' }]);
  }
  return at;
}

export type NewJob = JobPayload & {
  scheduledFor: Date;
  callbackUrl: string | null;
  mode: AccountMode;
  chargeEntryId: bigint;
  costMicros: bigint;
};

/** A job as it is written with its charge: everything but the charge, known before it is made. */
export type UnpaidJob = Omit<NewJob, 'chargeEntryId' | 'costMicros'> & {
  id: string;
  accountId: string;
  requestId: string;
  keyId: string | null;
  createdAt: Date;
};

/**
 * Writes the jobs of charged requests in their charges' transaction, one statement for a batch
 * (INSERT_MANY), each with the ledger entry that paid for it (ledger/charge.ts `RowsWriter`).
 */
export const JOB_ROWS: RowsWriter<UnpaidJob> = {
  async write(tx, rows: readonly PaidRow<UnpaidJob>[]) {
    const of = <T>(pick: (paid: PaidRow<UnpaidJob>) => T) => rows.map(pick);
    await tx.query(sql.INSERT_MANY, [
      of((p) => p.row.id),
      of((p) => p.row.accountId),
      of((p) => p.row.type),
      of((p) => p.row.scheduledFor),
      of((p) => JSON.stringify(p.row.request)),
      of((p) => p.row.callbackUrl),
      of((p) => p.row.mode),
      of((p) => p.entryId),
      of((p) => p.amountMicros),
      of((p) => p.row.requestId),
      of((p) => p.row.keyId),
      of((p) => p.row.createdAt),
    ]);
  },
};

function jobNotFound(jobId: string): AppError {
  return new AppError('JOB_NOT_FOUND', `Scheduled job ${jobId.slice(0, 64)} not found`);
}

export async function findJob(
  ctx: Context,
  accountId: string,
  type: JobType,
  jobId: string,
): Promise<JobRow> {
  const [row] = await queryable(ctx).query<JobRow>(sql.FIND, [jobId, accountId, type]);
  if (!row) throw jobNotFound(jobId);
  return row;
}

export interface Cancelled {
  job: JobRow;
  refundMicros: bigint;
  balanceMicros: bigint;
}

/**
 * Cancels a PENDING job due at least five minutes from now, and refunds its whole charge, in one
 * transaction. Another account's job, or a job of the other type, is JOB_NOT_FOUND.
 */
export function cancelJob(ctx: Context, accountId: string, type: JobType, jobId: string): Promise<Cancelled> {
  return withTransaction(ctx, async (tx) => {
    const now = tx.clock.now();
    const [job] = await tx.tx.query<JobRow>(sql.CANCEL, [
      jobId,
      accountId,
      type,
      new Date(now.getTime() + CANCEL_CUTOFF_MS),
      now,
    ]);
    if (!job) {
      const existing = await findJob(tx, accountId, type, jobId);
      const reason =
        existing.status === 'PENDING'
          ? 'it is due in less than 5 minutes'
          : `it is ${existing.status.toLowerCase()}`;
      throw new AppError('JOB_CANNOT_CANCEL', `Job ${existing.id} cannot be cancelled: ${reason}`, {
        details: {
          status: existing.status,
          scheduledFor: existing.scheduled_for.toISOString(),
          cancellableUntil: new Date(existing.scheduled_for.getTime() - CANCEL_CUTOFF_MS).toISOString(),
        },
      });
    }
    const refund = await refundCharge(tx.tx, {
      chargeEntryId: job.charge_entry_id,
      accountId,
      memo: `cancelled ${job.id}`,
    });
    return { job, refundMicros: refund.amountMicros, balanceMicros: refund.balanceMicros };
  });
}

export interface Page {
  status?: JobStatus | undefined;
  page: number;
  pageSize: number;
}

export async function listJobs(
  ctx: Context,
  accountId: string,
  type: JobType,
  page: Page,
): Promise<{ jobs: JobRow[]; total: number }> {
  const db = queryable(ctx);
  const status = page.status ?? null;
  const [rows, [count]] = await Promise.all([
    db.query<JobRow>(sql.LIST, [accountId, type, status, page.pageSize, (page.page - 1) * page.pageSize]),
    db.query<{ total: bigint }>(sql.COUNT, [accountId, type, status]),
  ]);
  return { jobs: rows, total: Number(count?.total ?? 0) };
}
