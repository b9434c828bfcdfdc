import { createConnection, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type BucketState, gcraStep, LocalRateLimiter } from '../../src/limits/rate-limiter.js';
import { RedisRateLimiter } from '../../src/limits/redis-rate-limiter.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext, testConfig } from '../helpers/context.js';
import { DashboardClient } from '../helpers/dashboard.js';
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
    let stored: BucketState | undefined;
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      const { decision, state } = gcraStep(stored, policy, 0);
      if (state !== null) stored = state;
      decisions.push(decision);
    }
    expect(decisions.map((d) => [d.allowed, d.remaining, d.resetMs, d.retryAfterMs])).toEqual([
      [true, 2, 100, 0],
      [true, 1, 200, 0],
      [true, 0, 300, 0],
      [false, 0, 300, 100],
    ]);
  });

  it('measures a bucket against the policy of each request: a changed limit applies at once', () => {
    const limiter = new LocalRateLimiter();
    const t0 = 5_000_000;
    const slow = { perSecond: 0.01, burst: 2 };
    expect([0, 1, 2].map(() => limiter.takeSync('k', slow, t0).allowed)).toEqual([true, true, false]);
    // Raised (a key's new limit through PATCH /keys, read at its next request): admitted at once,
    // with what the new limit leaves beside the two requests already made. An arrival time kept
    // in the old policy's interval refused for another 200 s.
    const raised = { perSecond: 1, burst: 20 };
    expect(limiter.takeSync('k', raised, t0)).toMatchObject({ allowed: true, remaining: 17, resetMs: 3000 });
    // Lowered again: the three requests made count against it at once, draining at its own rate.
    const lowered = { perSecond: 0.5, burst: 3 };
    expect(limiter.takeSync('k', lowered, t0)).toMatchObject({ allowed: false, retryAfterMs: 2000 });
    expect(limiter.takeSync('k', lowered, t0 + 2000).allowed).toBe(true);
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
    // A generous Redis timeout: on a loaded machine a command slower than the default 250 ms would
    // send that request to the instance's own bucket (the fallback, tested below) and admit more.
    const settings = {
      RATE_LIMIT_PER_SECOND: '0.01',
      RATE_LIMIT_BURST: '20',
      RATE_LIMIT_REDIS_TIMEOUT_MS: '30000',
      REDIS_URL,
    };
    const ctx = await createTestContext({ config: settings });
    const other = await buildApp({
      config: testConfig(settings),
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

  it('a limit raised at a restart applies to the next request: SIGN_IN_LIMIT_* with the bucket in Redis', async () => {
    const shared = await redisReachable(REDIS_URL);
    const base = await createTestContext();
    // A client address of this run's own (a /64 nobody else uses), so no earlier run's bucket counts.
    const client = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
    const challenge = async (config: Record<string, string>, tries = 1) => {
      const ctx = await createTestContext({
        database: base.database,
        config: { REDIS_URL, TRUSTED_PROXIES: '127.0.0.1/32', ...config },
      });
      try {
        const page = await DashboardClient.listening(ctx.app);
        const statuses: number[] = [];
        for (let i = 0; i < tries; i++) {
          const answer = await page.call('POST', '/dashboard/api/auth/challenge', {
            body: {},
            headers: { 'x-forwarded-for': client },
          });
          statuses.push(answer.status);
        }
        return statuses;
      } finally {
        await ctx.close();
      }
    };
    const low = { SIGN_IN_LIMIT_PER_SECOND: '0.01', SIGN_IN_LIMIT_BURST: '2' };
    try {
      expect(await challenge(low, 3)).toEqual([200, 200, 429]);
      // Restarted with the same limit: the bucket outlived the process (Redis), still empty.
      expect(await challenge(low)).toEqual([shared ? 429 : 200]);
      // Restarted with a higher limit: the next request passes (it waited 200 s before).
      expect(await challenge({ SIGN_IN_LIMIT_PER_SECOND: '1', SIGN_IN_LIMIT_BURST: '20' })).toEqual([200]);
    } finally {
      await base.close();
    }
  });

  it('RATE_LIMIT_REDIS_TIMEOUT_MS is a setting: 250 ms by default, 1 to 60000', () => {
    expect(loadConfig({}).access.redisTimeoutMs).toBe(250);
    expect(loadConfig({ RATE_LIMIT_REDIS_TIMEOUT_MS: '5000' }).access.redisTimeoutMs).toBe(5000);
    for (const bad of ['0', '60001', 'soon'])
      expect(() => loadConfig({ RATE_LIMIT_REDIS_TIMEOUT_MS: bad }), bad).toThrow(ConfigError);
  });

  it('falls back to per-instance limits when Redis answers later than RATE_LIMIT_REDIS_TIMEOUT_MS', async () => {
    if (!(await redisReachable(REDIS_URL))) return;
    // A relay to the real Redis that stops passing commands on when told: Redis "hangs".
    const redis = new URL(REDIS_URL);
    let hanging = false;
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      const upstream = createConnection(Number(redis.port || 6379), redis.hostname);
      sockets.push(client, upstream);
      client.on('data', (chunk) => {
        if (!hanging) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => client.write(chunk));
      client.on('error', () => {});
      upstream.on('error', () => {});
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as { port: number }).port;
    const limiter = new RedisRateLimiter(
      `redis://127.0.0.1:${port}`,
      new LocalRateLimiter(),
      silent,
      `sibyl:rl-test:${Math.random()}:`,
      100,
    );
    try {
      expect(await limiter.waitUntilReady(5000)).toBe(true);
      const policy = { perSecond: 1, burst: 2 };
      // Through Redis: its bucket of 2 is spent.
      expect((await limiter.take('k', policy, 5_000)).remaining).toBe(1);
      expect((await limiter.take('k', policy, 5_000)).remaining).toBe(0);
      hanging = true;
      // Redis does not answer within 100 ms: this instance's own (fresh) bucket decides, nothing fails.
      const results = [];
      for (let i = 0; i < 3; i++) results.push((await limiter.take('k', policy, 5_000)).allowed);
      expect(results).toEqual([true, true, false]);
    } finally {
      await limiter.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
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
