import { createContext, withTransaction } from '../../src/context.js';
import { silentLog } from '../../src/logger.js';
import type { QueueHandler } from '../../src/queue/queue.js';
import { type ClaimedDelivery, deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import type { WebhookRequest, WebhookTransport } from '../../src/webhooks/transport-port.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * The delivery queue's handler on a test database, driven by hand (claim, process) with the manual
 * clock, sending through a transport that records every request and answers `answer`.
 */
export interface DeliveryFixture {
  ctx: TestContext;
  handler: QueueHandler<ClaimedDelivery>;
  sent: WebhookRequest[];
  /** The status code the receiver answers; a case sets it before it sends. */
  answer: number;
  /** A price callback to https://hooks.example.com<path>, written as a result's transaction does. */
  enqueue(account: TestAccount, path: string): Promise<string>;
}

export async function deliveryFixture(options: {
  leaseMs: number;
  answer: number;
}): Promise<DeliveryFixture> {
  const ctx = await createTestContext();
  const sent: WebhookRequest[] = [];
  const transport: WebhookTransport = {
    async send(request) {
      sent.push(request);
      return { kind: 'response', statusCode: fixture.answer, latencyMs: 3, bodyPreview: '' };
    },
    async close() {},
  };
  const fixture: DeliveryFixture = {
    ctx,
    sent,
    answer: options.answer,
    handler: deliveryQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      transport,
      secrets: clearSecretBox,
      settings: { concurrency: 10, leaseMs: options.leaseMs },
    }),
    enqueue: (account, path) => enqueuePriceCallback(ctx, account, path),
  };
  return fixture;
}

/** A price callback to https://hooks.example.com<path>, written as a result's transaction does. */
export function enqueuePriceCallback(ctx: TestContext, account: TestAccount, path: string): Promise<string> {
  return withTransaction(createContext(ctx.database.db, ctx.clock), (tx) =>
    webhookOutbox.enqueueCallback(tx, {
      accountId: account.accountId,
      url: `https://hooks.example.com${path}`,
      type: 'price',
      status: 'completed',
      requestId: `req${path.replaceAll('/', '_')}`,
      data: {},
    }),
  );
}
