import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { RedisDetailStore } from '../../src/markets/read/shared-cache.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestAccount, type TestContext, testConfig } from '../helpers/context.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

// Two API instances on one database and one Redis, as two processes of a deployment would be.
// Each test file's keys live under their own prefix, so runs on other databases never meet.
let shared: boolean;
let ctx: TestContext;
let other: FastifyInstance;
let account: TestAccount;
// A generous command timeout: on a loaded machine 250 ms is missed now and then, and a miss is
// (rightly) a local computation, which is not what these tests are about.
const config = {
  REDIS_URL,
  MARKETS_DETAIL_CACHE_PREFIX: `sibyl-test:${randomBase62(12)}:`,
  MARKETS_DETAIL_CACHE_TIMEOUT_MS: '5000',
};

beforeAll(async () => {
  shared = await redisReachable(REDIS_URL);
  ctx = await createTestContext({ config });
  ctx.clock.set('2026-06-15T12:00:00Z');
  other = await buildApp({
    config: testConfig(config),
    db: ctx.database.db,
    clock: ctx.clock,
    callbacks: webhookOutbox,
  });
  await other.ready();
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'shared-1' })]));
});
afterAll(async () => {
  await other.close();
  await ctx.close();
});

const trade = (n: number) =>
  event('trade', iso(ctx.clock.now().getTime()), {
    marketId: 'shared-1',
    tradeId: `shared-t${n}`,
    outcome: 0,
    price: 5000,
    shares: '1000',
    buyer: wallet('x'),
    seller: wallet('y'),
  });

async function detail(app: FastifyInstance, id = 'shared-1') {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/markets/${id}`,
    headers: { authorization: `Bearer ${account.key}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json() as { computedAt: string; tradingStats: { totalTrades: number }; costUsd: string };
}

describe('the market detail cache shared through Redis', () => {
  it('a detail one instance computed is what the other serves, until the minute of its computation ends', async () => {
    const first = await detail(ctx.app);
    expect(first.tradingStats.totalTrades).toBe(0);
    await ingestText(ctx.database.db, ndjson([trade(1)]));

    ctx.clock.advance(MINUTE / 2);
    const fromOther = await detail(other);
    // With Redis, the other instance serves the first one's detail (computed before the trade);
    // without it, each instance computes its own.
    expect(fromOther.tradingStats.totalTrades).toBe(shared ? 0 : 1);
    expect(fromOther.computedAt === first.computedAt).toBe(shared);
    expect(fromOther.costUsd).toBe('0.02');

    ctx.clock.advance(MINUTE / 2 - 1);
    expect((await detail(other)).computedAt).toBe(fromOther.computedAt);

    // The minute is counted from the computation, on every instance: none serves an older answer.
    ctx.clock.advance(1);
    const minuteLater = iso(Date.parse(first.computedAt) + MINUTE);
    const fresh = await detail(other);
    expect(fresh.tradingStats.totalTrades).toBe(1);
    // Shared: the first detail's minute is over everywhere, so the other instance computes anew.
    // Alone: its own detail, computed half a minute in, still has half a minute to go.
    expect(fresh.computedAt).toBe(shared ? minuteLater : fromOther.computedAt);
    const again = await detail(ctx.app);
    expect(again.tradingStats.totalTrades).toBe(1);
    expect(again.computedAt).toBe(minuteLater);
  });

  it('a slug finds the detail an id stored, and an unreachable Redis is a miss, not an error', async () => {
    await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'Shared-Two' })]));
    ctx.clock.advance(1000);
    const byId = await detail(ctx.app, 'Shared-Two');
    ctx.clock.advance(1000);
    const bySlug = await detail(other, 'shared-two');
    expect(bySlug.computedAt === byId.computedAt).toBe(shared);

    const away = new RedisDetailStore<{ id: string; slug: string }>(
      'redis://127.0.0.1:9',
      { warn() {} },
      'x:',
    );
    expect(await away.get('shared-1')).toBeNull();
    await away.put({ id: 'shared-1', slug: 'shared-1' }, Date.now(), MINUTE);
    await away.close();
  });
});
