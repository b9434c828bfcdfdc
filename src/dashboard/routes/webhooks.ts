import Type from 'typebox';
import {
  Delivery,
  type DeliveryDeps,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  getDelivery,
  listDeliveries,
  RotatedSecret,
  redeliver,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  TestBody,
  type TestEventLimit,
  TestResult,
} from '../../webhooks/index.js';
import { type DashboardEdge, defineDashboardRoute } from './define.js';

/** Webhook deliveries, test events and the signing secret, through the API's verbs (docs/webhooks.md). */
export function webhookRoutes(
  edge: DashboardEdge,
  deps: DeliveryDeps & { testEventLimit: TestEventLimit },
): void {
  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/webhooks/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'Webhook deliveries, newest first (as GET /api/v1/webhooks/deliveries)',
    querystring: DeliveryListQuery,
    response: DeliveryList,
    handler: ({ ctx, account, query }) => listDeliveries(ctx, account.id, query),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/webhooks/deliveries/:deliveryId',
    operationId: 'getWebhookDelivery',
    summary: 'One delivery with every attempt',
    params: DeliveryParams,
    response: Delivery,
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, account, params }) => getDelivery(ctx, account.id, params.deliveryId),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/webhooks/deliveries/:deliveryId/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Sends a delivery again now, with the same webhook-id',
    params: DeliveryParams,
    response: Delivery,
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, account, params }) => redeliver(ctx, account.id, params.deliveryId),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/webhooks/test',
    operationId: 'sendTestWebhook',
    summary: 'Sends a signed test event to a URL now and answers what happened',
    body: TestBody,
    response: TestResult,
    handler: async ({ ctx, account, body, requestId }) =>
      sendTestEvent(ctx, deps, { accountId: account.id, url: body.callbackUrl, requestId }),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/webhooks/secret/reveal',
    operationId: 'revealWebhookSecret',
    summary: 'The webhook signing secret in clear (a POST: it is Origin-checked and never cached)',
    response: Type.Object({ webhookSecret: Type.String({ description: 'whsec_…' }) }),
    handler: async ({ ctx, account }) => revealWebhookSecret(ctx, deps.secrets, account.id),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/webhooks/secret/rotate',
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
    response: RotatedSecret,
    handler: async ({ ctx, account }) => rotateWebhookSecret(ctx, deps.secrets, account.id),
  });
}
