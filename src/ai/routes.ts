import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { FEES } from '../fees.js';
import { defineAccountRoute } from '../http/account-route.js';
import { defineRoute } from '../http/route.js';
import { handlerRules, NO_NUL, NO_NUL_WORDS } from '../http/schemas.js';
import { Semaphore } from '../lib/semaphore.js';
import { callbackUrlRule } from '../webhooks/index.js';
import { getRecord, listRecords, prepareSubmission, type SubmitDeps, submitRequest } from './requests.js';
import { AiRecord, AiRequestList, AiRequestListQuery, ResolveBody, SubmitResponse } from './schemas.js';

const RequestParams = Type.Object({
  requestId: Type.String({
    minLength: 1,
    maxLength: 100,
    description: `The requestId POST /ai/resolve answered. ${NO_NUL_WORDS}`,
    ...handlerRules(NO_NUL),
  }),
});

export function aiRoutes(app: FastifyInstance, deps: SubmitDeps & { maxConcurrentSubmits: number }): void {
  // Submits on one account serialise on its balance row, and each waits holding a pooled
  // connection: a burst of them would take every connection of the pool from the price routes'
  // charges and from the worker (docs/ai.md#performance).
  const submitting = new Semaphore(deps.maxConcurrentSubmits);

  defineRoute(app, {
    method: 'POST',
    url: '/ai/resolve',
    operationId: 'resolveWithAi',
    summary: 'Ask four AI models to resolve a question; the result arrives by polling and by webhook',
    description:
      'Either `question`, `outcomes` (and optional `context`) with a `callbackUrl`, or a `marketId` whose ' +
      'title, outcome labels and description are resolved (`callbackUrl` then optional). The request is ' +
      'charged now; a resolution that FAILS (fewer than 3 of the 4 models gave a valid answer) is refunded. ' +
      'See docs/ai.md for the consensus rule and the sandbox directives.',
    tags: ['ai'],
    permission: 'ai',
    price: FEES.aiResolve,
    billing: 'transaction',
    idempotent: true,
    body: ResolveBody,
    bodyRules: callbackUrlRule(deps.callbacks),
    response: SubmitResponse,
    errors: ['NOT_FOUND', 'AI_UNAVAILABLE'],
    handler: async ({ body, principal, ctx, transaction }) => {
      const submission = await prepareSubmission(ctx, deps, body, principal.mode);
      return submitting.run(() => transaction((tx) => submitRequest(tx, submission, () => tx.charge())));
    },
  });

  const record = {
    method: 'GET' as const,
    responseName: 'AiRequestRecord',
    description: 'Free. Poll until `status` is COMPLETED or FAILED.',
    tags: ['ai'],
    permission: 'ai' as const,
    params: RequestParams,
    response: AiRecord,
    errors: ['NOT_FOUND' as const],
  };
  defineAccountRoute(app, {
    ...record,
    url: '/ai/request/:requestId',
    operationId: 'getAiRequest',
    summary: 'An AI resolution request: its status, its result once COMPLETED, and every model’s vote',
    handler: async ({ params, caller, ctx }) =>
      getRecord(ctx, deps.callbacks, caller.accountId, params.requestId),
  });
  // The alias is the API's alone: the dashboard offers the one path.
  defineRoute(app, {
    ...record,
    url: '/ai/result/:requestId',
    operationId: 'getAiResult',
    summary: 'Alias of GET /ai/request/:requestId',
    handler: async ({ params, principal, ctx }) =>
      getRecord(ctx, deps.callbacks, principal.accountId, params.requestId),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/ai/requests',
    operationId: 'listAiRequests',
    responseName: 'AiRequestList',
    summary: 'The account’s AI resolution requests, newest first',
    description: 'Free. Each request’s votes and result are on its record (GET /ai/request/:requestId).',
    tags: ['ai'],
    permission: 'ai',
    querystring: AiRequestListQuery,
    response: AiRequestList,
    handler: async ({ query, caller, ctx }) => {
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? 50;
      const listed = await listRecords(ctx, caller.accountId, { status: query.status, page, pageSize });
      return { ...listed, page, pageSize };
    },
  });
}
