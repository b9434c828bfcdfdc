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
