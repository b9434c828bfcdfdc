import { createContext, type TxContext, withTransaction } from '../context.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { getBalance, refundCharge } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import { formatUsd } from '../lib/money.js';
import type { Log } from '../logger.js';
import { presentPrice } from '../prices/batch.js';
import { requireToken } from '../prices/requested.js';
import type { PriceService } from '../prices/service.js';
import type { CallbackOutbox } from '../webhooks/port.js';
import type { QueueHandler } from '../worker/queue.js';
import { JOBS_CHANNEL, type JobRow } from './jobs.js';
import type { AiJobInput, AiJobResolver } from './ports.js';
import * as sql from './sql.js';

export interface JobRunnerDeps {
  db: Database;
  clock: Clock;
  log: Log;
  prices: PriceService;
  ai: AiJobResolver;
  callbacks: CallbackOutbox;
  settings: { concurrency: number; priceLeaseMs: number; aiLeaseMs: number };
}

type Outcome =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; error: { code: string; message: string } };

/**
 * Runs scheduled jobs: claims due ones (and those whose worker died) with a lease, does the work
 * outside any transaction, then finishes the job — status, result, refund of a failed job, callback
 * row — in one transaction, only if it still holds the lease. A job whose worker died mid-work is
 * run again after its lease; it completes once.
 */
export function jobQueueHandler(deps: JobRunnerDeps): QueueHandler<JobRow> {
  const { db, settings } = deps;
  return {
    name: 'scheduled-jobs',
    channel: JOBS_CHANNEL,
    concurrency: settings.concurrency,
    claim: (limit, now) =>
      db.query<JobRow>(sql.CLAIM, [now, limit, randomBase62(16), settings.priceLeaseMs, settings.aiLeaseMs]),
    process: async (job) => finishJob(deps, job, await runOrGiveUp(deps, job)),
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE);
      return row?.next ?? null;
    },
  };
}

/** Runs of one job that end in an unexpected error before it fails for good (and is refunded). */
export const MAX_ATTEMPTS = 5;

async function runOrGiveUp(deps: JobRunnerDeps, job: JobRow): Promise<Outcome> {
  try {
    return await runJob(deps, job);
  } catch (err) {
    if (job.attempts < MAX_ATTEMPTS) throw err; // logged by the queue; retried after the lease
    deps.log.error({ err, jobId: job.id }, 'scheduled job failed on every attempt');
    return {
      ok: false,
      error: { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' },
    };
  }
}

async function runJob(deps: JobRunnerDeps, job: JobRow): Promise<Outcome> {
  if (job.job_type === 'AI_RESOLUTION') {
    return deps.ai.resolve(job.request as unknown as AiJobInput, job.mode, job.request_id);
  }
  const requested = String(job.request.symbol ?? '');
  try {
    const { symbol, target } = requireToken(requested, 'symbol');
    const price = await deps.prices.price(target, job.mode, symbol);
    return {
      ok: true,
      result: {
        requestId: job.request_id,
        symbol,
        ...presentPrice(price, target),
        resolutionTimestamp: deps.clock.now().toISOString(),
      },
    };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return { ok: false, error: errorOf(err) };
    if (err instanceof AppError && err.code === 'PRICE_UNAVAILABLE')
      return { ok: false, error: errorOf(err) };
    throw err;
  }
}

function errorOf(err: AppError): { code: string; message: string } {
  return { code: err.code, message: err.message };
}

async function finishJob(deps: JobRunnerDeps, job: JobRow, outcome: Outcome): Promise<void> {
  if (outcome.ok && !job.callback_url) {
    // Nothing else to write with it: one statement, no transaction round trips.
    const done = await deps.db.query(sql.FINISH, [
      job.id,
      job.lease_token,
      'COMPLETED',
      JSON.stringify(outcome.result),
      null,
      deps.clock.now(),
    ]);
    if (done.length === 0) deps.log.warn({ jobId: job.id }, 'scheduled job lost its lease before finishing');
    return;
  }
  const ctx = createContext(deps.db, deps.clock, { requestId: job.request_id });
  await withTransaction(ctx, async (tx) => {
    const now = tx.clock.now();
    const [finished] = await tx.tx.query<JobRow>(sql.FINISH, [
      job.id,
      job.lease_token,
      outcome.ok ? 'COMPLETED' : 'FAILED',
      outcome.ok ? JSON.stringify(outcome.result) : null,
      outcome.ok ? null : JSON.stringify(outcome.error),
      now,
    ]);
    if (!finished) {
      // The lease lapsed and another worker took the job: its run is the one that counts.
      deps.log.warn({ jobId: job.id }, 'scheduled job lost its lease before finishing');
      return;
    }
    let refundMicros = 0n;
    if (!outcome.ok) {
      const refund = await refundCharge(tx.tx, {
        chargeEntryId: job.charge_entry_id,
        accountId: job.account_id,
        memo: `failed ${job.id}`,
      });
      refundMicros = refund.amountMicros;
    }
    if (finished.callback_url) await enqueueJobCallback(deps, tx, finished, outcome, refundMicros);
  });
}

async function enqueueJobCallback(
  deps: JobRunnerDeps,
  tx: TxContext,
  job: JobRow,
  outcome: Outcome,
  refundMicros: bigint,
): Promise<void> {
  const balance = await getBalance(tx.tx, job.account_id);
  const data = outcome.ok
    ? {
        ...outcome.result,
        jobId: job.id,
        costUsd: formatUsd(job.cost_micros),
        remainingBalanceUsd: formatUsd(balance),
      }
    : {
        jobId: job.id,
        jobType: job.job_type,
        error: outcome.error,
        refundUsd: formatUsd(refundMicros),
        remainingBalanceUsd: formatUsd(balance),
      };
  const deliveryId = await deps.callbacks.enqueueCallback(tx, {
    accountId: job.account_id,
    url: job.callback_url as string,
    type: job.job_type === 'AI_RESOLUTION' ? 'ai' : 'price',
    status: outcome.ok ? 'completed' : 'failed',
    requestId: job.request_id,
    data,
  });
  await tx.tx.query(sql.SET_DELIVERY, [job.id, deliveryId]);
}
