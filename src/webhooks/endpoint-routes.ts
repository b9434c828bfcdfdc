import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { defineAccountRoute } from '../http/account-route.js';
import type { CursorCodec } from '../http/cursor.js';
import { API_PREFIX, errorResponses } from '../http/route.js';
import { listEndpointDeliveries, recoverEndpoint } from './endpoint-deliveries.js';
import {
  CreatedEndpoint,
  DeletedEndpoint,
  Endpoint,
  EndpointCreateBody,
  EndpointDeliveryList,
  EndpointDeliveryQuery,
  EndpointList,
  EndpointParams,
  EndpointUpdateBody,
  EventTypeList,
  RecoverBody,
  Recovered,
  RotatedEndpointSecret,
} from './endpoint-schemas.js';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointTargets,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from './endpoints.js';
import { EVENT_CATALOG } from './event-types.js';
import type { SecretBox } from './secret-box.js';

/** The catalog as GET /webhooks/event-types answers it: built once. */
const EVENT_TYPE_LIST: Static<typeof EventTypeList> = {
  eventTypes: Object.entries(EVENT_CATALOG).map(([name, { description, data }]) => ({
    name,
    description,
    schema: JSON.parse(JSON.stringify(data)),
  })),
};

/**
 * Registered endpoints and the event catalog (docs/webhooks.md#account-events): all free. Creating
 * an endpoint and rotating its secret answer a secret, so they take `keys`, as do changing where an
 * endpoint's events go and deleting it (as a key's own changes do); listing and reading, `account`.
 */
export function endpointRoutes(
  app: FastifyInstance,
  deps: { secrets: SecretBox; targets: EndpointTargets; cursors: CursorCodec },
): void {
  app.get(
    `${API_PREFIX}/webhooks/event-types`,
    {
      schema: {
        operationId: 'listWebhookEventTypes',
        summary:
          'The catalog of account events: each type’s name, description and the JSON Schema of its data',
        description: 'Public, free, no key needed (docs/webhooks.md#event-catalog).',
        tags: ['webhooks'],
        security: [],
        response: { 200: EventTypeList, ...errorResponses(['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']) },
      },
    },
    async () => EVENT_TYPE_LIST,
  );

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/endpoints',
    operationId: 'createWebhookEndpoint',
    responseName: 'CreatedWebhookEndpoint',
    summary: 'Register an endpoint for account events; answers its signing secret, shown only here',
    description:
      'At most 10 endpoints an account (409 MAX_ENDPOINTS_EXCEEDED). `eventTypes`: catalog names or ["*"]; an ' +
      'unknown one is 400 VALIDATION_ERROR naming it. The URL follows the callbacks’ rules. Answers a secret, ' +
      'so it takes the `keys` permission.',
    tags: ['webhooks'],
    permission: 'keys',
    idempotent: true,
    body: EndpointCreateBody,
    response: CreatedEndpoint,
    errors: ['MAX_ENDPOINTS_EXCEEDED'],
    handler: ({ body, caller, ctx }) =>
      createEndpoint(ctx, deps.secrets, deps.targets, {
        accountId: caller.accountId,
        mode: caller.mode,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description,
      }),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/webhooks/endpoints',
    operationId: 'listWebhookEndpoints',
    responseName: 'WebhookEndpointList',
    summary: 'The account’s registered endpoints, oldest first',
    tags: ['webhooks'],
    permission: 'account',
    response: EndpointList,
    handler: ({ caller, ctx }) => listEndpoints(ctx, caller.accountId),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/webhooks/endpoints/:endpointId',
    operationId: 'getWebhookEndpoint',
    responseName: 'WebhookEndpoint',
    summary: 'One registered endpoint',
    tags: ['webhooks'],
    permission: 'account',
    params: EndpointParams,
    response: Endpoint,
    errors: ['NOT_FOUND'],
    handler: ({ params, caller, ctx }) => getEndpoint(ctx, caller.accountId, params.endpointId),
  });

  defineAccountRoute(app, {
    method: 'PATCH',
    url: '/webhooks/endpoints/:endpointId',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change an endpoint’s url, event types, description, or enable or disable it',
    description:
      'Takes the `keys` permission, as changing a key does: it decides where the account’s events go.',
    tags: ['webhooks'],
    permission: 'keys',
    params: EndpointParams,
    body: EndpointUpdateBody,
    response: Endpoint,
    errors: ['NOT_FOUND'],
    handler: ({ params, body, caller, ctx }) =>
      updateEndpoint(ctx, deps.targets, caller.accountId, params.endpointId, body),
  });

  defineAccountRoute(app, {
    method: 'DELETE',
    url: '/webhooks/endpoints/:endpointId',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete an endpoint; its deliveries still waiting are cancelled',
    tags: ['webhooks'],
    permission: 'keys',
    params: EndpointParams,
    response: DeletedEndpoint,
    errors: ['NOT_FOUND'],
    handler: ({ params, caller, ctx }) => deleteEndpoint(ctx, caller.accountId, params.endpointId),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/endpoints/:endpointId/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    summary: 'A new signing secret for the endpoint; the previous one keeps signing beside it for 24 hours',
    tags: ['webhooks'],
    permission: 'keys',
    params: EndpointParams,
    response: RotatedEndpointSecret,
    errors: ['NOT_FOUND'],
    handler: ({ params, caller, ctx }) =>
      rotateEndpointSecret(ctx, deps.secrets, caller.accountId, params.endpointId),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/webhooks/endpoints/:endpointId/deliveries',
    operationId: 'listWebhookEndpointDeliveries',
    responseName: 'WebhookEndpointDeliveryList',
    summary: 'The endpoint’s deliveries with their attempts, newest first',
    description:
      'Filters: `status`, `eventType`, `since` (created at or after). `limit` a page (50 unless asked); ' +
      '`nextCursor` continues, with the same filters: a cursor is signed for its endpoint and filters, so an ' +
      'altered one, or one of another endpoint or filter, is 400 VALIDATION_ERROR (docs/webhooks.md#endpoint-health).',
    tags: ['webhooks'],
    permission: 'account',
    params: EndpointParams,
    querystring: EndpointDeliveryQuery,
    response: EndpointDeliveryList,
    errors: ['NOT_FOUND'],
    handler: ({ params, query, caller, ctx }) =>
      listEndpointDeliveries(ctx, deps.cursors, caller.accountId, params.endpointId, query),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/endpoints/:endpointId/recover',
    operationId: 'recoverWebhookEndpoint',
    summary: 'Send again every failed delivery of the endpoint since a time (at most 7 days back)',
    description:
      'Each CALLBACK_FAILED delivery created at or after `since` gets one more attempt, due now, with the same ' +
      '`webhook-id`, as a redelivery does; answers how many. `since` older than 7 days is 400 VALIDATION_ERROR.',
    tags: ['webhooks'],
    permission: 'account',
    idempotent: true,
    params: EndpointParams,
    body: RecoverBody,
    response: Recovered,
    errors: ['NOT_FOUND'],
    handler: ({ params, body, caller, ctx }) =>
      recoverEndpoint(ctx, caller.accountId, params.endpointId, body.since),
  });
}
