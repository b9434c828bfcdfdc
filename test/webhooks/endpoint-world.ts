import { createContext, withTransaction } from '../../src/context.js';
import { silentLog } from '../../src/logger.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { recordAccountEvent } from '../../src/webhooks/events.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { type HttpsReceiver, loopbackTransport, startHttpsReceiver } from '../helpers/https-receiver.js';

/**
 * A service whose endpoints post to a real HTTPS receiver (paths under /down answer 500), its
 * delivery queue drained by the test: what the endpoint tests start from.
 */
export async function endpointWorld() {
  const receiver: HttpsReceiver = await startHttpsReceiver((r) => (r.url.startsWith('/down') ? 500 : 200));
  const transport = await loopbackTransport();
  const ctx: TestContext = await createTestContext({
    config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    app: { webhookTransport: transport },
  });
  const queue = new WorkQueue(
    deliveryQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      transport,
      secrets: clearSecretBox,
      settings: { concurrency: 10, leaseMs: 30_000 },
    }),
    { db: ctx.database.db, clock: ctx.clock, log: silentLog },
  ) as WorkQueue<unknown>;
  return {
    ctx,
    receiver,
    queue,
    create: (account: TestAccount, body: Record<string, unknown>) =>
      ctx.request(account.key, { method: 'POST', url: '/api/v1/webhooks/endpoints', payload: body }),
    depositEvent: (account: TestAccount, mode: 'live' | 'sandbox' = 'sandbox') =>
      withTransaction(createContext(ctx.database.db, ctx.clock), (tx) =>
        recordAccountEvent(tx.tx, {
          accountId: account.accountId,
          mode,
          type: 'deposit.credited',
          data: depositData,
          at: ctx.clock.now(),
        }),
      ),
    /** Runs every attempt of the deliveries due, moving the clock past each retry delay (10 h each). */
    runAllAttempts: async () => {
      for (let i = 0; i < 9; i++) {
        await queue.drain();
        ctx.clock.advance(36_000_001);
      }
    },
    close: async () => {
      await ctx.close();
      await transport.close();
      await receiver.close();
    },
  };
}

export const depositData = {
  id: 'sol:sig:0',
  status: 'credited' as const,
  token: 'SOL' as const,
  amount: '1',
  usdValue: '150.00',
  rateUsd: '150',
  signature: 'sig',
  slot: 7,
  reference: 'sol:sig:0',
  memo: null,
  createdAt: '2026-12-01T00:00:00.000Z',
  balanceUsd: '160.00',
};
