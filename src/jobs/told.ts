import type { TxContext } from '../context.js';
import { formatUsd } from '../lib/money.js';
import { type CallbackOutbox, type ManyEventsInput, recordAccountEvents } from '../webhooks/index.js';
import type { JobRow } from './jobs.js';

/**
 * What a finished job tells, in the transaction that finishes it (src/jobs/runner.ts): its own
 * callback, when it has a `callbackUrl`, and `job.completed` or `job.failed` to the account's
 * registered endpoints (docs/webhooks.md#account-events).
 */

export type Outcome =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; error: { code: string; message: string } };

/**
 * `job.completed` or `job.failed` of each job finished to its account's endpoints, in the transaction
 * that finishes them: one statement for the batch, whether or not the jobs have a callbackUrl. The
 * row of a `job.completed` keeps the job's id, type and request id, not its result a second time:
 * the job keeps it; the deliveries carry it (docs/webhooks.md#account-events).
 */
export async function recordJobEvents(tx: TxContext, finished: readonly { job: JobRow; outcome: Outcome }[]) {
  const at = tx.clock.now();
  const events = finished.map(({ job, outcome }): ManyEventsInput => {
    const base = {
      jobId: job.id,
      type: job.job_type === 'AI_RESOLUTION' ? ('ai' as const) : ('price' as const),
      requestId: job.request_id,
    };
    const told = { accountId: job.account_id, mode: job.mode, at };
    return outcome.ok
      ? { ...told, type: 'job.completed', data: { ...base, result: outcome.result }, kept: base }
      : { ...told, type: 'job.failed', data: { ...base, error: outcome.error } };
  });
  await recordAccountEvents(tx.tx, events);
}

export function enqueueJobCallback(
  deps: { callbacks: CallbackOutbox },
  tx: TxContext,
  job: JobRow,
  outcome: Outcome,
  refundMicros: bigint,
  balance: bigint,
): Promise<string> {
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
  return deps.callbacks.enqueueCallback(tx, {
    accountId: job.account_id,
    url: job.callback_url as string,
    type: job.job_type === 'AI_RESOLUTION' ? 'ai' : 'price',
    status: outcome.ok ? 'completed' : 'failed',
    requestId: job.request_id,
    data,
  });
}
