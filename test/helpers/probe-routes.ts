import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../src/errors.js';
import { defineRoute } from '../../src/http/route.js';
import { cents } from '../../src/lib/money.js';

/**
 * Probe routes declared through the same `defineRoute` as the product routes, to exercise the
 * billing edge on its own: a 0.01 route that succeeds, fails on demand, or throws an internal error.
 */
export function probeRoutes(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'POST',
    url: '/test/billed',
    operationId: 'testBilled',
    summary: 'Test probe: a billed operation',
    tags: ['test'],
    permission: 'price',
    price: cents(1),
    idempotent: true,
    body: Type.Object(
      { outcome: Type.Optional(Type.Enum(['ok', 'unavailable', 'crash'])) },
      { additionalProperties: false },
    ),
    response: Type.Object({ ok: Type.Boolean() }),
    errors: ['PRICE_UNAVAILABLE'],
    handler: async ({ body }) => {
      if (body?.outcome === 'unavailable')
        throw new AppError('PRICE_UNAVAILABLE', 'No source could price it');
      if (body?.outcome === 'crash') throw new Error('database password is hunter2 at 10.0.0.7');
      return { ok: true };
    },
  });
}

/** The table the transactional probe writes to; created by the tests that call it. */
export const PROBE_TABLE =
  'CREATE TABLE IF NOT EXISTS probe_rows (request_id text PRIMARY KEY, account_id text NOT NULL)';

/**
 * A 0.01 route billed inside its own transaction, writing a row the charge pays for; it can fail
 * after charging, to show that the charge and the row then both roll back.
 */
export function transactionalProbeRoutes(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'POST',
    url: '/test/billed-in-transaction',
    operationId: 'testBilledInTransaction',
    summary: 'Test probe: a charge and a row in one transaction',
    tags: ['test'],
    permission: 'price',
    price: cents(1),
    billing: 'transaction',
    idempotent: true,
    body: Type.Object(
      { outcome: Type.Optional(Type.Enum(['ok', 'fail-after-charge'])) },
      { additionalProperties: false },
    ),
    response: Type.Object({ rows: Type.Integer() }),
    errors: ['PRICE_UNAVAILABLE'],
    handler: async ({ body, principal, requestId, transaction }) =>
      transaction(async (tx) => {
        await tx.tx.query('INSERT INTO probe_rows (request_id, account_id) VALUES ($1, $2)', [
          requestId,
          principal.accountId,
        ]);
        await tx.charge();
        if (body?.outcome === 'fail-after-charge')
          throw new AppError('PRICE_UNAVAILABLE', 'Failed after charging');
        const [row] = await tx.tx.query<{ n: bigint }>(
          'SELECT count(*) AS n FROM probe_rows WHERE account_id = $1',
          [principal.accountId],
        );
        return { rows: Number(row?.n ?? 0) };
      }),
  });
}

/**
 * `GET /test/stream`: a free event stream opened through the mechanism every stream route uses
 * (`app.services.streams`), standing in for the price and market streams: it counts against the same
 * limits as the webhook stream. It sends one comment line and nothing else.
 */
export function probeStreamRoute(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'GET',
    url: '/test/stream',
    operationId: 'testStream',
    summary: 'Test probe: an event stream',
    tags: ['test'],
    permission: 'account',
    response: Type.Object({}),
    stream: {},
    errors: ['SERVICE_UNAVAILABLE', 'STREAM_LIMIT_EXCEEDED'],
    handler: async ({ principal, requestId }, request, reply) => {
      await app.services.streams.open(request, reply, {
        requestId,
        owner: principal,
        source: () => ({ start: (sink) => sink.comment('probe stream'), stop() {} }),
      });
      return {};
    },
  });
}
