import type { FastifyInstance } from 'fastify';
import { FEES } from '../fees.js';
import { defineAccountRoute } from '../http/account-route.js';
import { defineRoute } from '../http/route.js';
import { type CallbackOutbox, callbackUrlRule } from '../webhooks/index.js';
import { cancelJob, type JobType, listJobs } from './jobs.js';
import type { AiJobResolver } from './ports.js';
import {
  checkAiJob,
  checkPriceJob,
  jobDetail,
  presentCancellation,
  presentJob,
  scheduleJob,
} from './schedule.js';
import {
  AiScheduleBody,
  Cancellation,
  JobCreated,
  JobDetail,
  JobIdParams,
  JobList,
  JobListQuery,
  PriceScheduleBody,
  PriceScheduledBody,
} from './schemas.js';

const SCHEDULE_ERRORS = ['INVALID_TIMESTAMP', 'TIMESTAMP_IN_PAST'] as const;

export function jobRoutes(
  app: FastifyInstance,
  deps: { callbacks: CallbackOutbox; ai: AiJobResolver },
): void {
  const { callbacks, ai } = deps;

  defineRoute(app, {
    method: 'POST',
    url: '/price/schedule',
    operationId: 'schedulePriceCheck',
    summary: 'Schedule a price check that calls back with the price at a future time',
    description:
      'The charge and the job commit together. Cancel at least 5 minutes before it is due for a full refund; ' +
      'a job that cannot get a price fails and is refunded (docs/jobs.md).',
    tags: ['jobs'],
    permission: 'schedule',
    price: FEES.priceSchedule,
    idempotent: true,
    body: PriceScheduleBody,
    bodyRules: callbackUrlRule(callbacks),
    response: JobCreated,
    errors: [...SCHEDULE_ERRORS, 'INVALID_SYMBOL', 'SYMBOL_NOT_FOUND'],
    handler: async ({ body, ctx, principal, chargeWith }) => {
      const job = checkPriceJob(ctx, callbacks, {
        symbol: body.symbol,
        at: body.resolutionTimestamp,
        atPath: 'body.resolutionTimestamp',
        callbackUrl: body.callbackUrl,
      });
      return scheduleJob(ctx, chargeWith, principal.accountId, principal.mode, job);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/price/scheduled',
    operationId: 'schedulePriceCheckAt',
    summary: 'Schedule a price check (variant: scheduledFor, optional callbackUrl)',
    description:
      'The same operation as POST /price/schedule with the fields `scheduledFor` and an optional `callbackUrl`: ' +
      'without one, the result is read with GET /price/scheduled/{jobId}.',
    tags: ['jobs'],
    permission: 'schedule',
    price: FEES.priceSchedule,
    idempotent: true,
    body: PriceScheduledBody,
    bodyRules: callbackUrlRule(callbacks),
    response: JobCreated,
    errors: [...SCHEDULE_ERRORS, 'INVALID_SYMBOL', 'SYMBOL_NOT_FOUND'],
    handler: async ({ body, ctx, principal, chargeWith }) => {
      const job = checkPriceJob(ctx, callbacks, {
        symbol: body.symbol,
        at: body.scheduledFor,
        atPath: 'body.scheduledFor',
        callbackUrl: body.callbackUrl,
      });
      return scheduleJob(ctx, chargeWith, principal.accountId, principal.mode, job);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/ai/schedule',
    operationId: 'scheduleAiResolution',
    summary: 'Schedule an AI resolution that calls back with the consensus at a future time',
    description:
      'The question, outcomes and context follow the limits of POST /ai/resolve (docs/ai.md). A resolution that ' +
      'fails (fewer than 3 models answered) fails the job, which is refunded.',
    tags: ['jobs'],
    permission: 'schedule',
    price: FEES.aiSchedule,
    idempotent: true,
    body: AiScheduleBody,
    bodyRules: callbackUrlRule(callbacks),
    response: JobCreated,
    errors: [...SCHEDULE_ERRORS, 'AI_UNAVAILABLE'],
    handler: async ({ body, ctx, principal, chargeWith }) => {
      const job = checkAiJob(ctx, callbacks, ai, principal.mode, { ...body, at: body.resolutionTimestamp });
      return scheduleJob(ctx, chargeWith, principal.accountId, principal.mode, job);
    },
  });

  for (const [prefix, type, tag] of [
    ['/price', 'PRICE_RESOLUTION', 'Price'],
    ['/ai', 'AI_RESOLUTION', 'Ai'],
  ] as const) {
    listAndCancel(app, callbacks, prefix, type, tag);
  }
}

function listAndCancel(
  app: FastifyInstance,
  callbacks: CallbackOutbox,
  prefix: '/price' | '/ai',
  type: JobType,
  tag: 'Price' | 'Ai',
): void {
  const what = type === 'PRICE_RESOLUTION' ? 'scheduled price checks' : 'scheduled AI resolutions';

  defineAccountRoute(app, {
    method: 'GET',
    url: `${prefix}/scheduled`,
    operationId: `list${tag}Jobs`,
    summary: `List the account's ${what}, newest first`,
    tags: ['jobs'],
    permission: 'schedule',
    querystring: JobListQuery,
    response: JobList,
    handler: async ({ query, ctx, caller }) => {
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? 50;
      const { jobs, total } = await listJobs(ctx, caller.accountId, type, {
        status: query.status,
        page,
        pageSize,
      });
      const now = ctx.clock.now();
      return { jobs: jobs.map((job) => presentJob(job, now)), total, page, pageSize };
    },
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: `${prefix}/scheduled/:jobId`,
    operationId: `get${tag}Job`,
    summary: `One of the account's ${what}: what was asked, the result once done, the callback's delivery`,
    tags: ['jobs'],
    permission: 'schedule',
    params: JobIdParams,
    response: JobDetail,
    errors: ['JOB_NOT_FOUND'],
    handler: async ({ params, ctx, caller }) =>
      jobDetail(ctx, callbacks, caller.accountId, type, params.jobId),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: `${prefix}/scheduled/:jobId/cancel`,
    operationId: `cancel${tag}Job`,
    summary: `Cancel one of the ${what} (at least 5 minutes before it is due) for a full refund`,
    tags: ['jobs'],
    permission: 'schedule',
    idempotent: true,
    params: JobIdParams,
    response: Cancellation,
    errors: ['JOB_NOT_FOUND', 'JOB_CANNOT_CANCEL'],
    handler: async ({ params, caller, transaction }) =>
      transaction(async (tx) =>
        presentCancellation(await cancelJob(tx, caller.accountId, type, params.jobId)),
      ),
  });
}
