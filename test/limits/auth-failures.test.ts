import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { generateKey } from '../../src/keys/format.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestAccount, type TestContext, testConfig } from '../helpers/context.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

/**
 * Failed authentications are limited per client address: random keys with a valid checksum each
 * cost a database lookup, so an address that keeps failing is refused before any lookup.
 */
const LIMITS = { AUTH_FAILURE_LIMIT_BURST: '5', AUTH_FAILURE_LIMIT_PER_SECOND: '1' };

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ config: LIMITS });
  account = await ctx.createAccount();
});
afterAll(async () => {
  await ctx.close();
});

function call(key: string, remoteAddress: string, app = ctx.app) {
  return app.inject({
    method: 'GET',
    url: '/api/v1/account',
    remoteAddress,
    headers: { authorization: `Bearer ${key}` },
  });
}
const randomKey = () => generateKey('sandbox').key;

describe('failed authentications per client address', () => {
  it('after the burst, an address is refused with 429 before any key lookup; others are not', async () => {
    const attacker = '203.0.113.9';
    const before = { ...ctx.app.services.authFailures.counts };
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(randomKey(), attacker)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);

    // The failure that finds the bucket empty is answered 429 (its lookup was already made).
    const refused = await call(randomKey(), attacker);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toEqual({
      error: 'Too many failed authentications from this address; retry in 1 s',
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 5, retryAfterSeconds: 1 },
      requestId: refused.headers['x-request-id'],
    });
    // From then on, refused without a lookup: no new (negative) cache entry, whatever key it sends.
    const cached = ctx.app.services.authenticator.cache.size;
    expect((await call(randomKey(), attacker)).statusCode).toBe(429);
    expect((await call(account.key, attacker)).statusCode).toBe(429);
    expect(ctx.app.services.authenticator.cache.size).toBe(cached);
    // Another address is not affected.
    expect((await call(account.key, '198.51.100.7')).statusCode).toBe(200);

    // One more failure a second.
    ctx.clock.advance(1000);
    expect((await call(randomKey(), attacker)).statusCode).toBe(401);
    expect((await call(randomKey(), attacker)).statusCode).toBe(429);
    ctx.clock.advance(1000);
    expect((await call(account.key, attacker)).statusCode).toBe(200);

    const counts = ctx.app.services.authFailures.counts;
    expect(counts.failures - before.failures).toBe(8);
    expect(counts.refused - before.refused).toBe(4);
  });

  it('an IPv6 client is limited by its /64', async () => {
    for (let i = 0; i < 5; i++)
      expect((await call(randomKey(), `2001:db8:0:1::${i + 1}`)).statusCode).toBe(401);
    expect((await call(randomKey(), '2001:db8:0:1::ff')).statusCode).toBe(429);
    expect((await call(account.key, '2001:db8:0:2::1')).statusCode).toBe(200);
  });
});

describe('failed authentications shared through Redis', () => {
  it('two instances on one Redis share one count (or, without Redis, count per instance)', async () => {
    const shared = await redisReachable(REDIS_URL);
    const config = { ...LIMITS, REDIS_URL, AUTH_FAILURE_LIMIT_PER_SECOND: '0.001' };
    const first = await createTestContext({ config });
    const second = await buildApp({
      config: testConfig(config),
      db: first.database.db,
      clock: first.clock,
      callbacks: webhookOutbox,
    });
    await second.ready();
    try {
      // A fresh address per run: Redis outlives the test.
      const address = `198.18.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}`;
      const statuses = [];
      for (let i = 0; i < 10; i++) {
        statuses.push((await call(randomKey(), address, i % 2 ? second : first.app)).statusCode);
      }
      expect(statuses.filter((s) => s === 401)).toHaveLength(shared ? 5 : 10);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
