/** The webhooks' descriptor (src/feature.ts): their routes, the delivery queue, `sibyl webhooks`. */
import type { CoreConfig } from '../core-settings.js';
import type { BaseDeps, Feature } from '../feature.js';
import type { CursorCodec } from '../http/cursor.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import type { RateLimiter } from '../limits/index.js';
import type { RetentionSettings } from '../retention/index.js';
import { type WebhookSettings, webhookSettings } from './config.js';
import type { DeliveryDeps } from './delivery.js';
import type { SecretBox } from './secret-box.js';
import type { WebhookTransport } from './transport-port.js';

export interface Needs {
  config: Pick<CoreConfig, 'port'> & { webhooks: WebhookSettings; retention: RetentionSettings };
  ports: { webhookTransport: WebhookTransport; secrets: SecretBox };
  edge: { rateLimiter: RateLimiter; streams: EventStreams; cursors: CursorCodec };
}

/** How deliveries are sent: by the worker's queue, and by the routes' test events and redeliveries. */
function deliveryDeps({ config, db, clock, log, ports }: BaseDeps & Omit<Needs, 'edge'>): DeliveryDeps {
  return {
    db,
    clock,
    log,
    transport: ports.webhookTransport,
    secrets: ports.secrets,
    settings: config.webhooks,
  };
}

export const webhooksFeature: Feature<{ webhooks: typeof webhookSettings }, Needs> = {
  name: 'webhooks',
  tables: [
    'account_events',
    'webhook_attempts',
    'webhook_deliveries',
    'webhook_endpoints',
    'webhook_secrets',
  ],
  settings: { webhooks: webhookSettings },
  async openApi() {
    const { accountEventsDocument } = await import('./openapi-webhooks.js');
    return accountEventsDocument();
  },
  async api(app, deps) {
    const [{ webhookRoutes }, { testEventLimit }, { alertRoutes }] = await Promise.all([
      import('./routes.js'),
      import('./deliveries.js'),
      import('./alert-routes.js'),
    ]);
    webhookRoutes(app, {
      ...deliveryDeps(deps),
      testEventLimit: testEventLimit(deps.edge.rateLimiter, deps.config.webhooks.testLimit),
      streams: deps.edge.streams,
    });
    const { endpointRoutes } = await import('./endpoint-routes.js');
    endpointRoutes(app, {
      cursors: deps.edge.cursors,
      secrets: deps.ports.secrets,
      targets: { allowPrivateTargets: deps.config.webhooks.allowPrivateTargets },
    });
    alertRoutes(app);
  },
  async worker(deps) {
    const [{ WorkQueue }, { deliveryQueueHandler }, { balanceAlertTask }, { createContext }] =
      await Promise.all([
        import('../queue/queue.js'),
        import('./delivery.js'),
        import('./balance-alerts.js'),
        import('../context.js'),
      ]);
    return {
      queues: [new WorkQueue(deliveryQueueHandler(deliveryDeps(deps)), deps)],
      tasks: [balanceAlertTask(createContext(deps.db, deps.clock))],
    };
  },
  commands: {
    webhooks: {
      usage: [
        '  webhooks list [--account ID] [--status S]  the latest 100 webhook deliveries, newest first',
        '  webhooks redeliver DELIVERY_ID          send a delivery again now (same webhook-id)',
        '  webhooks cancel DELIVERY_ID             stop a pending delivery (never sent again)',
        "  webhooks listen --forward-to URL [--api-url URL]  post the account's events to a local URL",
        '                                          as they are sent (SIBYL_API_KEY, SIBYL_API_URL);',
        '                                          --events a,b only those types (deposit.credited, price…)',
        '  webhooks reseal-secrets                 re-seal every webhook secret with SECRET_ENCRYPTION_KEY',
      ],
      async run(io, action, args) {
        // A client of a running service, not of its database.
        if (action === 'listen') return (await import('./listen-command.js')).listenCommand(io, args);
        const [{ webhooksCommand }, { createSecretBox }] = await Promise.all([
          import('./cli.js'),
          import('./secret-box.js'),
        ]);
        await webhooksCommand(await io.database(), io.out, action, args, createSecretBox(io.config.webhooks));
        return true;
      },
    },
  },
  async retention() {
    const [{ PRUNE_DELIVERIES, PRUNE_TEST_DELIVERIES }, { PRUNE_EVENTS }] = await Promise.all([
      import('./sql.js'),
      import('./events-sql.js'),
    ]);
    return [
      {
        // Account events, kept as long as their deliveries (docs/webhooks.md#account-events).
        name: 'account_events',
        prune: PRUNE_EVENTS,
        keepMs: (c) => c.retention.webhookDeliveriesMs,
      },
      {
        name: 'webhook_deliveries',
        prune: PRUNE_DELIVERIES,
        keepMs: (c) => c.retention.webhookDeliveriesMs,
        busy: true,
        // A callback's `request_id` names the AI request or the scheduled job it reports on.
        refersTo: ['ai_requests', 'scheduled_jobs'],
      },
      {
        name: 'webhook_deliveries (test)',
        prune: PRUNE_TEST_DELIVERIES,
        keepMs: (c) => c.retention.testDeliveriesMs,
      },
    ];
  },
};
