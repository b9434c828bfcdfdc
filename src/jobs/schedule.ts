import type { AccountMode } from '../accounts/index.js';
import { type Context, queryable } from '../context.js';
import { type PaidRows, paidRows } from '../ledger/index.js';
import { newId } from '../lib/ids.js';
import { formatUsd } from '../lib/money.js';
import { invalidSymbol, readToken, unknownSymbol } from '../prices/index.js';
import type { CallbackOutbox } from '../webhooks/index.js';
import {
  type Cancelled,
  canCancel,
  findJob,
  JOB_ROWS,
  type JobPayload,
  type JobRow,
  type JobType,
  readScheduledFor,
  type UnpaidJob,
} from './jobs.js';
import type { AiJobInput, AiJobResolver } from './ports.js';

/** What a schedule request says, checked before anything is charged. */
export type CheckedJob = JobPayload & {
  scheduledFor: Date;
  callbackUrl: string | null;
};

/**
 * A price check's input: the time (INVALID_TIMESTAMP, TIMESTAMP_IN_PAST, VALIDATION_ERROR beyond a
 * year), the symbol (INVALID_SYMBOL when malformed), the callback URL (VALIDATION_ERROR), and only
 * then an unknown symbol (404 SYMBOL_NOT_FOUND): input errors come first.
 */
export function checkPriceJob(
  ctx: Context,
  callbacks: CallbackOutbox,
  input: { symbol: string; at: string; atPath: string; callbackUrl: string | undefined },
): CheckedJob {
  const scheduledFor = readScheduledFor(input.at, input.atPath, ctx.clock.now());
  const token = readToken(input.symbol);
  if ('invalid' in token) throw invalidSymbol(input.symbol, 'body.symbol', token.invalid);
  if (input.callbackUrl !== undefined) callbacks.validateCallbackUrl(input.callbackUrl, 'body.callbackUrl');
  if (!token.target) throw unknownSymbol(token.symbol);
  return {
    type: 'PRICE_RESOLUTION',
    scheduledFor,
    request: { symbol: token.symbol },
    callbackUrl: input.callbackUrl ?? null,
  };
}

/** An AI resolution's input: the time, the question's limits, the callback URL, then availability. */
export function checkAiJob(
  ctx: Context,
  callbacks: CallbackOutbox,
  ai: AiJobResolver,
  mode: AccountMode,
  input: AiJobInput & { at: string; callbackUrl: string },
): CheckedJob {
  const scheduledFor = readScheduledFor(input.at, 'body.resolutionTimestamp', ctx.clock.now());
  const request: AiJobInput = {
    question: input.question,
    outcomes: input.outcomes,
    ...(input.context !== undefined ? { context: input.context } : {}),
    ...(input.confidenceThreshold !== undefined ? { confidenceThreshold: input.confidenceThreshold } : {}),
  };
  ai.validate(request, mode);
  callbacks.validateCallbackUrl(input.callbackUrl, 'body.callbackUrl');
  ai.assertAvailable(mode);
  return {
    type: 'AI_RESOLUTION',
    scheduledFor,
    request,
    callbackUrl: input.callbackUrl,
  };
}

/**
 * Hands the job to the request's charge (`input.chargeWith` of a route billed after its handler): it
 * is written in the charge's transaction, coalesced with other requests' charges and jobs, or not at
 * all when the charge is refused (docs/jobs.md#how-scheduling-commits). Answers the job as it is
 * once committed; the route's answer is sent only after that commit.
 */
export function scheduleJob(
  ctx: Context,
  chargeWith: (rows: PaidRows) => void,
  accountId: string,
  mode: AccountMode,
  job: CheckedJob,
) {
  const now = ctx.clock.now();
  const unpaid: UnpaidJob = {
    ...job,
    mode,
    id: newId('job'),
    accountId,
    requestId: ctx.requestId ?? '',
    keyId: ctx.principal?.keyId ?? null,
    createdAt: now,
  };
  chargeWith(paidRows(JOB_ROWS, unpaid));
  return presentJob(
    {
      id: unpaid.id,
      job_type: job.type,
      scheduled_for: job.scheduledFor,
      status: 'PENDING',
      created_at: now,
    },
    now,
  );
}

/** A job as creation and list answers show it. */
export function presentJob(
  job: Pick<JobRow, 'id' | 'job_type' | 'scheduled_for' | 'status' | 'created_at'>,
  now: Date,
) {
  return {
    jobId: job.id,
    jobType: job.job_type,
    scheduledFor: job.scheduled_for.toISOString(),
    status: job.status,
    createdAt: job.created_at.toISOString(),
    canCancel: canCancel(job, now),
  };
}

/** One job as `GET /{price,ai}/scheduled/:jobId` and the dashboard show it: what was asked, its result, its callback. */
export async function jobDetail(
  ctx: Context,
  callbacks: CallbackOutbox,
  accountId: string,
  type: JobType,
  jobId: string,
) {
  const job = await findJob(ctx, accountId, type, jobId);
  const delivery = job.delivery_id ? await callbacks.deliveryView(queryable(ctx), job.delivery_id) : null;
  return {
    ...presentJob(job, ctx.clock.now()),
    startedAt: job.started_at?.toISOString() ?? null,
    finishedAt: job.finished_at?.toISOString() ?? null,
    attempts: job.attempts,
    request: job.request,
    callbackUrl: job.callback_url,
    costUsd: formatUsd(job.cost_micros),
    result: job.result,
    error: job.error,
    delivery,
  };
}

/** A cancel's answer: the refund, and the balance it left. */
export function presentCancellation(cancelled: Cancelled) {
  return {
    jobId: cancelled.job.id,
    status: 'cancelled' as const,
    refundUsd: formatUsd(cancelled.refundMicros),
    remainingBalanceUsd: formatUsd(cancelled.balanceMicros),
  };
}
