import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Sql } from '../../src/db/database.js';
import { silentLog } from '../../src/logger.js';
import { type AttemptRecord, AttemptRecorder } from '../../src/webhooks/attempt-recorder.js';
import { type ClaimedDelivery, deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { RETRY_DELAYS_MS } from '../../src/webhooks/outbox.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import * as sql from '../../src/webhooks/sql.js';
import type { WebhookOutcome, WebhookRequest } from '../../src/webhooks/transport-port.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { enqueuePriceCallback } from './delivery-fixture.js';

/**
 * The attempts a worker makes at once are recorded together (docs/webhooks.md#operating): outcomes
 * that come back together go to the database in one FINISH_ATTEMPTS statement, and each delivery in it
 * ends as its own outcome says — delivered, retried, stopped, cancelled in flight, or left alone when
 * its lease was lost. A statement that fails is retried one outcome at a time.
 */

const LEASE_MS = 30_000;
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** The test database, counting the statements that record attempts. */
function countingDatabase(db: Database): { db: Database; finishes: () => number } {
  let finishes = 0;
  const counted: Database = Object.create(db);
  counted.query = <R>(statement: Sql, params?: readonly unknown[]) => {
    if (typeof statement !== 'string' && statement.name === sql.FINISH_ATTEMPTS.name) finishes++;
    return db.query<R>(statement, params);
  };
  return { db: counted, finishes: () => finishes };
}

function enqueue(account: TestAccount, path: string): Promise<string> {
  return enqueuePriceCallback(ctx, account, path);
}

async function delivery(id: string) {
  const [row] = await ctx.database.db.query<{
    status: string;
    attempts: number;
    due_at: Date | null;
    last_status_code: number | null;
    lease_token: string | null;
    finished_at: Date | null;
  }>(
    `SELECT status, attempts, due_at, last_status_code, lease_token, finished_at
       FROM webhook_deliveries WHERE id = $1`,
    [id],
  );
  const attempts = await ctx.database.db.query<{ attempt: number; status_code: number | null }>(
    'SELECT attempt, status_code FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
    [id],
  );
  return { ...row, recorded: attempts };
}

describe('attempts recorded together', () => {
  it('one statement records a batch of mixed outcomes, each delivery as its own outcome says', async () => {
    ctx.clock.set(new Date('2026-12-07T12:00:00Z'));
    const account = await ctx.createAccount();
    const paths = ['/ok-1', '/ok-2', '/fails', '/gone', '/cancelled', '/taken-over'];
    const ids = new Map<string, string>();
    for (const path of paths) ids.set(path, await enqueue(account, path));
    const id = (path: string) => ids.get(path) as string;

    // Every request waits until all have arrived (and done what they do meanwhile), then all are
    // answered at once: their outcomes come back together.
    const answers: Record<string, number> = {
      '/ok-1': 200,
      '/ok-2': 204,
      '/fails': 500,
      '/gone': 410,
      '/cancelled': 503,
      '/taken-over': 200,
    };
    let arrived = 0;
    let release: () => void = () => {};
    const allArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sent: WebhookRequest[] = [];
    const counting = countingDatabase(ctx.database.db);
    const handler = deliveryQueueHandler({
      db: counting.db,
      clock: ctx.clock,
      log: silentLog,
      secrets: clearSecretBox,
      settings: { concurrency: 10, leaseMs: LEASE_MS },
      transport: {
        async send(request): Promise<WebhookOutcome> {
          sent.push(request);
          const path = new URL(request.url).pathname;
          if (path === '/cancelled') {
            const cancelled = await ctx.request(account.key, {
              method: 'POST',
              url: `/api/v1/webhooks/deliveries/${id(path)}/cancel`,
            });
            expect(cancelled.statusCode).toBe(200);
          }
          if (path === '/taken-over') {
            // Its lease lapsed and another worker claimed it meanwhile: a new lease token.
            await ctx.database.db.query(
              "UPDATE webhook_deliveries SET lease_token = 'another-worker' WHERE id = $1",
              [id(path)],
            );
          }
          if (++arrived === paths.length) release();
          await allArrived;
          return { kind: 'response', statusCode: answers[path] as number, latencyMs: 7, bodyPreview: '' };
        },
        async close() {},
      },
    });

    const claimed = await handler.claim(10, ctx.clock.now());
    expect(claimed.map((d) => d.id).sort()).toEqual([...ids.values()].sort());
    ctx.clock.advance(250); // the answers come back 250 ms after the claim
    await Promise.all(claimed.map((d: ClaimedDelivery) => handler.process(d)));

    expect(sent).toHaveLength(paths.length);
    expect(counting.finishes()).toBe(1); // six outcomes, one statement
    const at = ctx.clock.now();
    expect(await delivery(id('/ok-1'))).toMatchObject({
      status: 'DELIVERED',
      due_at: null,
      last_status_code: 200,
      lease_token: null,
      finished_at: at,
      recorded: [{ attempt: 1, status_code: 200 }],
    });
    expect(await delivery(id('/ok-2'))).toMatchObject({
      status: 'DELIVERED',
      last_status_code: 204,
      recorded: [{ attempt: 1, status_code: 204 }],
    });
    expect(await delivery(id('/fails'))).toMatchObject({
      status: 'PENDING',
      due_at: new Date(at.getTime() + (RETRY_DELAYS_MS[0] as number)),
      last_status_code: 500,
      lease_token: null,
      finished_at: null,
      recorded: [{ attempt: 1, status_code: 500 }],
    });
    expect(await delivery(id('/gone'))).toMatchObject({
      status: 'STOPPED',
      last_status_code: 410,
      finished_at: at,
      recorded: [{ attempt: 1, status_code: 410 }],
    });
    expect(await delivery(id('/cancelled'))).toMatchObject({
      status: 'CANCELLED',
      due_at: null,
      last_status_code: 503,
      finished_at: at,
      recorded: [{ attempt: 1, status_code: 503 }],
    });
    // The lease was lost: nothing of this attempt is recorded; the other worker's lease stands.
    expect(await delivery(id('/taken-over'))).toMatchObject({
      status: 'SENDING',
      lease_token: 'another-worker',
      recorded: [],
    });
  });

  it('a statement that fails is retried one outcome at a time: the bad one fails alone', async () => {
    ctx.clock.set(new Date('2026-12-07T13:00:00Z'));
    const account = await ctx.createAccount();
    const ids = [await enqueue(account, '/a'), await enqueue(account, '/b'), await enqueue(account, '/c')];
    const handler = deliveryQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      secrets: clearSecretBox,
      settings: { concurrency: 10, leaseMs: LEASE_MS },
      transport: {
        send: async () => ({ kind: 'response', statusCode: 200, latencyMs: 1, bodyPreview: '' }),
        async close() {},
      },
    });
    const claimed = (await handler.claim(10, ctx.clock.now())).filter((d) => ids.includes(d.id));
    expect(claimed).toHaveLength(3);
    const counting = countingDatabase(ctx.database.db);
    const recorder = new AttemptRecorder(counting.db);
    const now = ctx.clock.now();
    const outcome = (d: ClaimedDelivery, latencyMs: number): AttemptRecord => ({
      deliveryId: d.id,
      leaseToken: d.lease_token,
      status: 'DELIVERED',
      dueAt: null,
      statusCode: 200,
      error: null,
      finishedAt: now,
      attemptedAt: now,
      latencyMs,
    });
    const [a, b, c] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
    const results = await Promise.allSettled([
      recorder.record(outcome(a, 5)),
      // Past the range of an integer column: the statement carrying it fails.
      recorder.record(outcome(b, 2 ** 40)),
      recorder.record(outcome(c, 6)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toMatchObject({ value: true });
    expect(results[2]).toMatchObject({ value: true });
    expect(counting.finishes()).toBe(4); // the batch of three, then each alone
    expect((await delivery(a.id)).status).toBe('DELIVERED');
    expect((await delivery(c.id)).status).toBe('DELIVERED');
    // Unrecorded: still SENDING under its lease, settled as abandoned once the lease lapses.
    expect(await delivery(b.id)).toMatchObject({ status: 'SENDING', recorded: [] });
  });
});
