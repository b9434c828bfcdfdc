import Fastify from 'fastify';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { createGate } from '../../src/gate/gate.js';
import { DashboardTwins, defineAccountRoute } from '../../src/http/account-route.js';
import { defineRoute, type RouteSpec } from '../../src/http/route.js';
import { cents } from '../../src/lib/money.js';

/**
 * A route whose declaration cannot bill or key as it says is refused by defineRoute, when the app is
 * built, instead of failing on its first request; likewise an account route the dashboard would miss.
 */
type AnySpec = RouteSpec<never, never, never, ReturnType<typeof Type.Object>>;

function declare(overrides: Partial<AnySpec>): () => void {
  const app = Fastify();
  app.decorate('apiRoutes', []);
  app.decorate('gate', createGate(app));
  const spec = {
    method: 'POST',
    url: '/test/declared',
    operationId: 'testDeclared',
    summary: 'Test probe',
    tags: ['test'],
    permission: 'price',
    response: Type.Object({ ok: Type.Boolean() }),
    handler: async () => ({ ok: true }),
    ...overrides,
  } as AnySpec;
  return () => defineRoute(app, spec);
}

describe('defineRoute refuses a misdeclared route', () => {
  it('billing without a price', () => {
    expect(declare({ billing: 'transaction' })).toThrow("testDeclared: billing 'transaction' needs a price");
    expect(declare({ billing: 'after' })).toThrow("testDeclared: billing 'after' needs a price");
  });

  it('a computed price billed inside the transaction, which charges before there is a result', () => {
    expect(declare({ billing: 'transaction', price: () => cents(1) })).toThrow(
      "testDeclared: billing 'transaction' needs a fixed price",
    );
  });

  it('a computed price without the least it can cost, which the balance is checked against first', () => {
    expect(declare({ price: () => cents(1) })).toThrow('testDeclared: a computed price needs leastPrice');
  });

  it('an Idempotency-Key on a GET, whose key is ignored', () => {
    expect(declare({ method: 'GET', idempotent: true })).toThrow(
      'testDeclared: a GET takes no Idempotency-Key',
    );
  });

  it('a query schema that admits unknown parameters, which would let a misspelt one through', () => {
    expect(declare({ method: 'GET', querystring: Type.Object({ q: Type.String() }) as never })).toThrow(
      'testDeclared: its query schema must set additionalProperties: false',
    );
    expect(
      declare({
        method: 'GET',
        querystring: Type.Object({ q: Type.String() }, { additionalProperties: false }) as never,
      }),
    ).not.toThrow();
  });

  it('and defines every well-declared combination', () => {
    for (const overrides of [
      {},
      { idempotent: true },
      { price: cents(1) },
      { price: cents(1), idempotent: true },
      { price: () => cents(1), leastPrice: cents(1), billing: 'after' as const },
      { price: cents(1), billing: 'transaction' as const, idempotent: true },
      { method: 'GET' as const },
    ]) {
      expect(declare(overrides)).not.toThrow();
    }
  });
});

describe('defineAccountRoute', () => {
  it('hands the dashboard its twin, and refuses one declared after the dashboard took them', () => {
    const app = Fastify();
    app.decorate('apiRoutes', []);
    app.decorate('gate', createGate(app));
    app.decorate('dashboardTwins', new DashboardTwins());
    const account = (operationId: string) => () =>
      defineAccountRoute(app, {
        method: 'GET',
        url: `/test/${operationId}/:thingId`,
        operationId,
        summary: 'Test probe',
        tags: ['test'],
        permission: 'account',
        params: Type.Object({ thingId: Type.String() }),
        response: Type.Object({ ok: Type.Boolean() }),
        handler: async () => ({ ok: true }),
      });
    expect(account('early')).not.toThrow();
    const [twin] = app.dashboardTwins.take();
    expect(twin).toMatchObject({
      method: 'GET',
      url: '/test/early/:thingId',
      api: 'GET /api/v1/test/early/{thingId}',
    });
    expect(account('late')).toThrow(
      'late: declared after the dashboard took the account routes; list its feature before the dashboard',
    );
  });
});
