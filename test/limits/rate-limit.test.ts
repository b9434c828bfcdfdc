import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { gcraStep, LocalRateLimiter } from '../../src/limits/rate-limiter.js';
import { RedisRateLimiter } from '../../src/limits/redis-rate-limiter.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext, testConfig } from '../helpers/context.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

const silent = { warn: () => {} };

describe('GCRA token bucket', () => {
  it('admits exactly burst at once, then exactly `rate` per second', () => {
    const limiter = new LocalRateLimiter();
    const policy = { perSecond: 50, burst: 100 };
    const t0 = 1_000_000;
    let admitted = 0;
    for (let i = 0; i < 300; i++) if (limiter.takeSync('k', policy, t0).allowed) admitted++;
    expect(admitted).toBe(100);
    // Over a measured window of 2 s (requests spread over it), exactly 2 × 50 more get in.
    let later = 0;
    for (let ms = 1; ms <= 2000; ms++) if (limiter.takeSync('k', policy, t0 + ms).allowed) later++;
    expect(later).toBe(100);
  });

  it('reports remaining, reset and retry-after exactly', () => {
    const policy = { perSecond: 10, burst: 3 };
    let tat: number | undefined;
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      const { decision, newTat } = gcraStep(tat, policy, 0);
      if (newTat !== null) tat = newTat;
      decisions.push(decision);
    }
    expect(decisions.map((d) => [d.allowed, d.remaining, d.resetMs, d.retryAfterMs])).toEqual([
      [true, 2, 100, 0],
      [true, 1, 200, 0],
      [true, 0, 300, 0],
      [false, 0, 300, 100],
    ]);
  });

  it('keeps keys apart', () => {
    const limiter = new LocalRateLimiter();
    const policy = { perSecond: 1, burst: 1 };
    expect(limiter.takeSync('a', policy, 0).allowed).toBe(true);
    expect(limiter.takeSync('a', policy, 0).allowed).toBe(false);
    expect(limiter.takeSync('b', policy, 0).allowed).toBe(true);
  });
});

describe('rate limits at the HTTP edge', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext({ config: { RATE_LIMIT_PER_SECOND: '50', RATE_LIMIT_BURST: '100' } });
  });
  afterAll(async () => {
    await ctx.close();
  });

  const account = (key: string) => ctx.request(key, { method: 'GET', url: '/api/v1/account' });

  it('the default admits 100 at once, then 50 a second, with RateLimit headers on every answer', async () => {
    const { key } = await ctx.createAccount();
    const burst = await Promise.all(Array.from({ length: 130 }, () => account(key)));
    const ok = burst.filter((r) => r.statusCode === 200);
    const limited = burst.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(100);
    expect(limited).toHaveLength(30);
    for (const r of burst) {
      expect(r.headers['ratelimit-limit']).toBe('100');
      expect(r.headers['ratelimit-remaining']).toMatch(/^\d+$/);
      expect(r.headers['ratelimit-reset']).toMatch(/^\d+$/);
    }
    expect(limited[0]?.json()).toEqual({
      error: 'Rate limit of 100 requests exceeded; retry in 1 s',
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 100, retryAfterSeconds: 1 },
      requestId: limited[0]?.headers['x-request-id'],
    });
    expect(limited[0]?.headers['retry-after']).toBe('1');
    ctx.clock.advance(1000);
    const next = await Promise.all(Array.from({ length: 60 }, () => account(key)));
    expect(next.filter((r) => r.statusCode === 200)).toHaveLength(50);
  });

  it('follows a per-key limit set through PATCH /keys', async () => {
    const owner = await ctx.createAccount();
    const target = await ctx.addKey(owner.accountId, ['account']);
    ctx.clock.advance(10_000);
    const patched = await ctx.request(owner.key, {
      method: 'PATCH',
      url: `/api/v1/keys/${target.record.id}`,
      payload: { rateLimit: { requestsPerSecond: 2, burst: 3 } },
    });
    expect(patched.statusCode).toBe(200);
    const results = [];
    for (let i = 0; i < 5; i++) results.push((await account(target.key)).statusCode);
    expect(results).toEqual([200, 200, 200, 429, 429]);
    ctx.clock.advance(500);
    expect((await account(target.key)).statusCode).toBe(200);
  });
});

describe('rate limits shared through Redis', () => {
  it('two API instances on one Redis share one limit (or, without Redis, fall back per instance)', async () => {
    const shared = await redisReachable(REDIS_URL);
    const ctx = await createTestContext({
      config: { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '20', REDIS_URL },
    });
    const other = await buildApp({
      config: testConfig({ RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '20', REDIS_URL }),
      db: ctx.database.db,
      clock: ctx.clock,
      callbacks: webhookOutbox,
    });
    await other.ready();
    try {
      const { key } = await ctx.createAccount();
      const headers = { authorization: `Bearer ${key}` };
      const calls = Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? other : ctx.app).inject({ method: 'GET', url: '/api/v1/account', headers }),
      );
      const statuses = (await Promise.all(calls)).map((r) => r.statusCode);
      const admitted = statuses.filter((s) => s === 200).length;
      // Shared: 20 in all. Fallback policy: each instance enforces its own 20-request bucket.
      expect(admitted).toBe(shared ? 20 : 30);
      expect(statuses.filter((s) => s === 429)).toHaveLength(30 - admitted);
    } finally {
      await other.close();
      await ctx.close();
    }
  });

  it('falls back to per-instance limits when Redis cannot be reached, without failing requests', async () => {
    const limiter = new RedisRateLimiter('redis://127.0.0.1:1', new LocalRateLimiter(), silent);
    try {
      const policy = { perSecond: 1, burst: 2 };
      const results = [];
      for (let i = 0; i < 3; i++) results.push((await limiter.take('k', policy, 5_000)).allowed);
      expect(results).toEqual([true, true, false]);
    } finally {
      await limiter.close();
    }
  });
});
