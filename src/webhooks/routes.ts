import type { FastifyInstance } from 'fastify';
import { defineAccountRoute } from '../http/account-route.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import { defineRoute } from '../http/route.js';
import {
  cancelDelivery,
  getDelivery,
  listDeliveries,
  redeliver,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  type TestEventLimit,
} from './deliveries.js';
import type { DeliveryDeps } from './delivery.js';
import {
  Delivery,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  RotatedSecret,
  StreamEvent,
  StreamHeaders,
  TestBody,
  TestResult,
  WebhookSecret,
} from './schemas.js';
import { WebhookEventFeed } from './stream-source.js';

/** The integrator's webhook tools (docs/webhooks.md): free, permission `account`. */
export function webhookRoutes(
  app: FastifyInstance,
  deps: DeliveryDeps & { testEventLimit: TestEventLimit; streams: EventStreams },
): void {
  const feed = new WebhookEventFeed(deps);
  defineRoute(app, {
    method: 'GET',
    url: '/webhooks/stream',
    operationId: 'streamWebhookEvents',
    responseName: 'WebhookStreamEvent',
    summary: 'The account’s webhook events as they are created, as server-sent events',
    description:
      'A `text/event-stream` that stays open: each callback the account is sent from now on (result callbacks ' +
      'and test events) arrives once as an event `webhook` whose `id` is the delivery id and whose `data` is ' +
      'this object — the raw body and the headers of a delivery, signatures included, so a receiver verifies ' +
      'it exactly as a delivered callback. A comment line after 15 s without any other line keeps the ' +
      'connection alive (`STREAM_HEARTBEAT_MS`). A client reconnecting with `Last-Event-ID` (as EventSource does, and ' +
      '`sibyl webhooks listen`) first gets the events created after that one, if it is an event of the last ' +
      '24 hours (at least once: an event of the same millisecond may come again; receivers deduplicate on ' +
      '`webhook-id`); otherwise the stream starts at connect and a comment line says so. A redelivery is not ' +
      'streamed again; every event is also in `GET /webhooks/deliveries`. Open streams are limited per key (3), ' +
      'per account (10), per client address (20) and per server, counted together with the other event ' +
      'streams and across instances: past a limit 429 `STREAM_LIMIT_EXCEEDED` naming it in `details.limit` ' +
      '(`perKey`, `perAccount`, `perAddress`, `perProcess`). A client too slow to read (over 1 MiB unsent, ' +
      'or unsent data 30 s old) gets `event: error` `SLOW_CONSUMER` and the stream ends; a server shutting ' +
      'down sends `event: error` `SHUTTING_DOWN` (docs/api.md#event-streams). ' +
      '`sibyl webhooks listen --forward-to URL` posts each event to a local URL (docs/webhooks.md#local-development).',
    tags: ['webhooks'],
    permission: 'account',
    response: StreamEvent,
    stream: { headers: StreamHeaders },
    errors: ['SERVICE_UNAVAILABLE', 'STREAM_LIMIT_EXCEEDED'],
    handler: async ({ principal, requestId }, request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      await deps.streams.open(request, reply, {
        requestId,
        owner: principal,
        source: () =>
          feed.source(
            principal.accountId,
            requestId,
            typeof lastEventId === 'string' ? lastEventId : undefined,
          ),
      });
      // The response is hijacked and streams on; nothing more is sent from here.
      return { id: '', headers: {}, body: '' };
    },
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/test',
    operationId: 'sendTestWebhook',
    summary: 'Send a signed test event to a URL now and answer what happened',
    description:
      'The event is `{ requestId, type: "test", status: "completed", data, timestamp, signature }`, signed ' +
      'like every callback. One attempt, no retries; it is listed with the other deliveries. Free, and limited ' +
      'per account on its own: 10 a minute by default (`WEBHOOK_TEST_LIMIT_PER_MINUTE`, a bucket of that many ' +
      'refilled at that rate), beyond which it answers 429 `RATE_LIMIT_EXCEEDED` with `Retry-After` and sends ' +
      'nothing. Test deliveries are kept 24 hours.',
    tags: ['webhooks'],
    permission: 'account',
    idempotent: true,
    body: TestBody,
    response: TestResult,
    // Its own limit, beside the key's: the dashboard's twin, which has no key's, answers it too.
    errors: ['RATE_LIMIT_EXCEEDED'],
    handler: async ({ body, caller, ctx, requestId }) =>
      sendTestEvent(ctx, deps, { accountId: caller.accountId, url: body.callbackUrl, requestId }),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/webhooks/deliveries',
    operationId: 'listWebhookDeliveries',
    responseName: 'WebhookDeliveryList',
    summary: 'The account’s webhook deliveries, newest first',
    tags: ['webhooks'],
    permission: 'account',
    querystring: DeliveryListQuery,
    response: DeliveryList,
    handler: ({ query, caller, ctx }) => listDeliveries(ctx, caller.accountId, query),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/webhooks/deliveries/:deliveryId',
    operationId: 'getWebhookDelivery',
    responseName: 'WebhookDelivery',
    summary: 'One delivery with every attempt (time, status code or error, latency)',
    tags: ['webhooks'],
    permission: 'account',
    params: DeliveryParams,
    response: Delivery,
    errors: ['NOT_FOUND'],
    handler: async ({ params, caller, ctx }) => getDelivery(ctx, caller.accountId, params.deliveryId),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/deliveries/:deliveryId/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Send a delivery again now, with the same webhook-id',
    description:
      'A finished delivery (DELIVERED, STOPPED, CALLBACK_FAILED) gets one new attempt; one still retrying ' +
      'is brought forward. The answer shows it PENDING; poll it for the outcome.',
    tags: ['webhooks'],
    permission: 'account',
    idempotent: true,
    params: DeliveryParams,
    response: Delivery,
    errors: ['NOT_FOUND'],
    // An action answers its own request id, as every action does; the delivery's stays in originalRequestId.
    handler: async ({ params, caller, ctx, requestId }) => ({
      ...(await redeliver(ctx, caller.accountId, params.deliveryId)),
      requestId,
    }),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/webhooks/deliveries/:deliveryId/cancel',
    operationId: 'cancelWebhookDelivery',
    summary: 'Stop a delivery that is still being retried',
    description:
      'A PENDING delivery becomes CANCELLED at once and is never sent again. One SENDING (an attempt in ' +
      'flight, which cannot be called back) shows `cancelledAt` and ends CANCELLED when that attempt ' +
      'finishes — DELIVERED if that attempt was answered 2xx. A finished delivery (DELIVERED, STOPPED, ' +
      'CALLBACK_FAILED, CANCELLED) answers 409 DELIVERY_CANNOT_CANCEL with its status in `details`. ' +
      'A redelivery withdraws a cancellation.',
    tags: ['webhooks'],
    permission: 'account',
    idempotent: true,
    params: DeliveryParams,
    response: Delivery,
    errors: ['NOT_FOUND', 'DELIVERY_CANNOT_CANCEL'],
    handler: async ({ params, caller, ctx, requestId }) => ({
      ...(await cancelDelivery(ctx, caller.accountId, params.deliveryId)),
      requestId,
    }),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/account/webhook-secret',
    operationId: 'getWebhookSecret',
    summary: 'The signing secret of the account’s webhook callbacks',
    description:
      'Whoever holds it can sign a callback your receiver accepts, so it takes the `keys` permission — ' +
      'the one that can already make keys — and not `account`: a leaked read-only key cannot forge callbacks.',
    tags: ['webhooks'],
    permission: 'keys',
    response: WebhookSecret,
    dashboard: {
      method: 'POST',
      reason:
        'A POST there, not a GET: it answers a secret, so it needs the dashboard’s `Origin`, as every ' +
        'dashboard request that changes something does.',
    },
    handler: async ({ caller, ctx }) => revealWebhookSecret(ctx, deps.secrets, caller.accountId),
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/account/webhook-secret/rotate',
    operationId: 'rotateWebhookSecret',
    summary: 'A new webhook signing secret; the previous one keeps signing beside it for 24 hours',
    description:
      'Answers the new secret, so it takes the `keys` permission, as `GET /account/webhook-secret` does.',
    tags: ['webhooks'],
    permission: 'keys',
    response: RotatedSecret,
    handler: async ({ caller, ctx }) => rotateWebhookSecret(ctx, deps.secrets, caller.accountId),
  });
}
