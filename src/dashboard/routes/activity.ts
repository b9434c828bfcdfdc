import Type from 'typebox';
import { AiRecord, AiRequestList, AiRequestListQuery, getRecord, listRecords } from '../../ai/index.js';
import {
  Cancellation,
  cancelJob,
  JobDetail,
  JobIdParams,
  JobList,
  JobListQuery,
  type JobType,
  jobDetail,
  listJobs,
  presentCancellation,
  presentJob,
} from '../../jobs/index.js';
import type { CallbackOutbox } from '../../webhooks/index.js';
import { type DashboardEdge, defineDashboardRoute } from './define.js';

const JobKind = Type.Object({
  jobType: Type.Union([Type.Literal('price'), Type.Literal('ai')], {
    description: 'price: scheduled price checks; ai: scheduled AI resolutions',
  }),
});
const TYPES: Record<'price' | 'ai', JobType> = { price: 'PRICE_RESOLUTION', ai: 'AI_RESOLUTION' };

const RequestParams = Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 100 }) });

/** Scheduled jobs and AI requests, through the verbs the API's routes call (docs/dashboard.md). */
export function activityRoutes(edge: DashboardEdge, deps: { callbacks: CallbackOutbox }): void {
  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/jobs/:jobType',
    operationId: 'listJobs',
    summary: 'Scheduled price checks or AI resolutions, newest first (as GET /api/v1/{price,ai}/scheduled)',
    params: JobKind,
    querystring: JobListQuery,
    response: JobList,
    handler: async ({ ctx, account, params, query }) => {
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? 50;
      const { jobs, total } = await listJobs(ctx, account.id, TYPES[params.jobType], {
        status: query.status,
        page,
        pageSize,
      });
      const now = ctx.clock.now();
      return { jobs: jobs.map((job) => presentJob(job, now)), total, page, pageSize };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/jobs/:jobType/:jobId',
    operationId: 'getJob',
    summary: 'One job: what was scheduled, its result, its callback’s delivery',
    params: Type.Object({ ...JobKind.properties, ...JobIdParams.properties }),
    response: JobDetail,
    errors: ['JOB_NOT_FOUND'],
    handler: async ({ ctx, account, params }) =>
      jobDetail(ctx, deps.callbacks, account.id, TYPES[params.jobType], params.jobId),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/jobs/:jobType/:jobId/cancel',
    operationId: 'cancelJob',
    summary: 'Cancels a job at least 5 minutes before it is due, with a full refund',
    params: Type.Object({ ...JobKind.properties, ...JobIdParams.properties }),
    response: Cancellation,
    errors: ['JOB_NOT_FOUND', 'JOB_CANNOT_CANCEL'],
    handler: async ({ ctx, account, params }) =>
      presentCancellation(await cancelJob(ctx, account.id, TYPES[params.jobType], params.jobId)),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/ai-requests',
    operationId: 'listAiRequests',
    summary: 'AI resolution requests, newest first (as GET /api/v1/ai/requests)',
    querystring: AiRequestListQuery,
    response: AiRequestList,
    handler: async ({ ctx, account, query }) => {
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? 50;
      const listed = await listRecords(ctx, account.id, { status: query.status, page, pageSize });
      return { ...listed, page, pageSize };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/ai-requests/:requestId',
    operationId: 'getAiRequest',
    summary: 'One AI request with each model’s vote and reasoning (as GET /api/v1/ai/request/{requestId})',
    params: RequestParams,
    response: AiRecord,
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, account, params }) => getRecord(ctx, deps.callbacks, account.id, params.requestId),
  });
}
