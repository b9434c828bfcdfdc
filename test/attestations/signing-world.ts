import { silentLog } from '../../src/logger.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * A service that signs with `secret`, its worker (AI resolutions and scheduled jobs drained by the
 * test) and the callbacks view, its clock at 2026-11-22 12:00 UTC: what a test of signed answers
 * made by the worker starts from.
 */
export async function signingWorld(secret: string): Promise<{ ctx: TestContext; worker: Worker }> {
  const ctx = await createTestContext({ config: { ATTESTATION_SECRET_KEY: secret } });
  await ctx.database.db.exec(CALLBACKS_VIEW);
  ctx.clock.set('2026-11-22T12:00:00.000Z');
  const worker = await createWorker({
    config: ctx.config,
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    callbacks: webhookOutbox,
    liveVenues: [],
  });
  return { ctx, worker };
}
