/** The callback outbox, deliveries, signing, the guarded transport, `sibyl webhooks`: the room's door. */
import type { Feature, WorkDeps } from '../feature.js';
import type { RouteDeps } from '../http/feature-routes.js';
import { WorkQueue } from '../queue/queue.js';
import { webhooksCommand } from './cli.js';
import { webhookSettings } from './config.js';
import { type TestEventLimit, testEventLimit } from './deliveries.js';
import { type DeliveryDeps, deliveryQueueHandler } from './delivery.js';
import { listenCommand } from './listen-command.js';
import { createSecretBox } from './secret-box.js';

export {
  getDelivery,
  listDeliveries,
  redeliver,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  type TestEventLimit,
  testEventLimit,
} from './deliveries.js';
export type { DeliveryDeps } from './delivery.js';
export { StreamRefusedError } from './listen.js';
export { localDevelopment, localDevelopmentNotice, withPrivateTargets } from './local-development.js';
export { createWebhookOutbox } from './outbox.js';
export { type CallbackOutbox, callbackUrlRule, MAX_CALLBACK_URL_CHARS } from './port.js';
export {
  Delivery,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  RotatedSecret,
  TestBody,
  TestResult,
} from './schemas.js';
export { createSecretBox, type SecretBox } from './secret-box.js';
export { PRUNE_DELIVERIES, PRUNE_TEST_DELIVERIES } from './sql.js';
export type { WebhookTransport } from './transport-port.js';

/** How deliveries are sent: by the worker's queue, and by the routes' test events and redeliveries. */
function deliveryDeps({ config, db, clock, log, ports }: Omit<WorkDeps, 'deposits'>): DeliveryDeps {
  return {
    db,
    clock,
    log,
    transport: ports.webhookTransport,
    secrets: ports.secrets,
    settings: config.webhooks,
  };
}

/** What the webhook routes (the API's and the dashboard's) send and redeliver test events with. */
export function webhookRouteDeps(deps: RouteDeps): DeliveryDeps & { testEventLimit: TestEventLimit } {
  const { config, edge } = deps;
  return {
    ...deliveryDeps(deps),
    testEventLimit: testEventLimit(edge.rateLimiter, config.webhooks.testLimit),
  };
}

export const webhooksFeature: Feature<{ webhooks: typeof webhookSettings }> = {
  name: 'webhooks',
  settings: { webhooks: webhookSettings },
  async api(app, deps) {
    const { webhookRoutes } = await import('./routes.js');
    webhookRoutes(app, { ...webhookRouteDeps(deps), streams: deps.edge.streams });
  },
  worker: (deps) => ({
    queues: [new WorkQueue(deliveryQueueHandler(deliveryDeps(deps)), deps)],
  }),
  commands: {
    webhooks: {
      usage: [
        '  webhooks list [--account ID] [--status S]  the latest 100 webhook deliveries, newest first',
        '  webhooks redeliver DELIVERY_ID          send a delivery again now (same webhook-id)',
        '  webhooks cancel DELIVERY_ID             stop a pending delivery (never sent again)',
        "  webhooks listen --forward-to URL [--api-url URL]  post the account's events to a local URL",
        '                                          as they are sent (SIBYL_API_KEY, SIBYL_API_URL)',
        '  webhooks reseal-secrets                 re-seal every webhook secret with SECRET_ENCRYPTION_KEY',
      ],
      async run(io, action, args) {
        // A client of a running service, not of its database.
        if (action === 'listen') return listenCommand(io, args);
        await webhooksCommand(await io.database(), io.out, action, args, createSecretBox(io.config.webhooks));
        return true;
      },
    },
  },
};
