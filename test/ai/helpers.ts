import type { LightMyRequestResponse } from 'fastify';
import { createAiQueue } from '../../src/ai/queue.js';
import { createResolver } from '../../src/ai/resolver.js';
import type { Queryable } from '../../src/db/database.js';
import { type Log, silentLog } from '../../src/logger.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import type { CallbackOutbox } from '../../src/webhooks/port.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import type { TestContext } from '../helpers/context.js';

export const CALLBACK_URL = 'https://hooks.example.com/sibyl';

/** A worker's AI queue on the test context's database and clock, drained by hand. */
export function testQueue(ctx: TestContext, options: { callbacks?: CallbackOutbox; log?: Log } = {}) {
  return createAiQueue({
    db: ctx.database.db,
    clock: ctx.clock,
    log: options.log ?? silentLog,
    resolver: createResolver(ctx.config.ai, ctx.clock),
    callbacks: options.callbacks ?? webhookOutbox,
    config: ctx.config.ai,
  });
}

export async function createCallbackTable(db: Queryable): Promise<void> {
  await db.exec(CALLBACKS_VIEW);
}

export interface RecordedCallback {
  id: string;
  account_id: string;
  url: string;
  type: string;
  status: string;
  request_id: string;
  data: unknown;
}

export function callbacksOf(db: Queryable, requestId: string): Promise<RecordedCallback[]> {
  return db.query<RecordedCallback>(
    'SELECT id, account_id, url, type, status, request_id, data FROM test_recorded_callbacks WHERE request_id = $1',
    [requestId],
  );
}

export function submit(ctx: TestContext, key: string, payload: unknown): Promise<LightMyRequestResponse> {
  return ctx.request(key, { method: 'POST', url: '/api/v1/ai/resolve', payload: payload as object });
}

export function poll(ctx: TestContext, key: string, requestId: string, alias = false) {
  return ctx.request(key, { method: 'GET', url: `/api/v1/ai/${alias ? 'result' : 'request'}/${requestId}` });
}

export async function rowCount(db: Queryable, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM ai_requests WHERE account_id = $1', [
    accountId,
  ]);
  return Number(row?.n ?? 0);
}

export function question(extra: Record<string, unknown> = {}) {
  return {
    question: 'Did the Artemis II crew splash down before 2026-05-01?',
    outcomes: ['Yes', 'No'],
    callbackUrl: CALLBACK_URL,
    ...extra,
  };
}
