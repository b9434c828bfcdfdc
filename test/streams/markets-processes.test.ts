import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import type { TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';
import { event, marketCreated, ndjson, wallet } from '../markets/events.js';
import { named, type StreamService, startStreamService } from './service.js';

/**
 * The market stream across API processes on one PostgreSQL (docs/streams.md#markets): a market event
 * ingested in one process reaches the subscribers of another (its commit notifies every process,
 * which reads the new rows once), in both directions; and the stream limits count the market, price
 * and webhook streams of both processes together (Redis).
 */

const shared = await redisReachable(REDIS_URL);
let streams: StreamService;
let ctx: TestContext;
let service: ServiceProcess;
let there = '';
let here = '';

beforeAll(async () => {
  if (!usingPostgres) return;
  const redis: Record<string, string> = shared ? { REDIS_URL } : {};
  streams = await startStreamService({ config: { ...redis } });
  ({ ctx, base: here } = streams);
  const port = await freePort();
  there = `http://127.0.0.1:${port}`;
  service = await startService(
    'serve',
    {
      DATABASE_URL: ctx.database.location,
      DB_POOL_SIZE: '4',
      PORT: String(port),
      HOST: '127.0.0.1',
      ...redis,
    },
    httpReady(there),
  );
  there = `${there}/api/v1`;
});
afterAll(async () => {
  await service?.kill();
  if (usingPostgres) await streams.close();
});

const stream = (base: string, key: string, path: string) => streams.open(path, key, {}, base);

describe.runIf(usingPostgres)('market streams across API processes (PostgreSQL)', () => {
  it('an event ingested in one process reaches the subscribers of the other, once, in order', async () => {
    const report = await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'mp-a' })]));
    expect(report).toMatchObject({ refused: 0 });
    const { key } = await ctx.createAccount({ mode: 'sandbox' });
    const remote = await stream(there, key, '/stream/markets?ids=mp-a');
    const local = await stream(here, key, '/stream/markets?ids=mp-a');
    for (const client of [remote, local]) await client.until(() => named(client, 'market').length >= 1);
    // Ingested by this process (the test's own): the other process's subscriber hears of it.
    const trades = [1, 2, 3].map((i) =>
      event('trade', `2026-03-05T10:00:0${i}Z`, {
        marketId: 'mp-a',
        tradeId: `mp-t${i}`,
        outcome: 1,
        price: 4000 + i,
        shares: '500',
        buyer: wallet('buyer'),
        seller: wallet('seller'),
      }),
    );
    for (const t of trades)
      expect(await ingestText(ctx.database.db, ndjson([t]))).toMatchObject({ refused: 0 });
    for (const client of [remote, local]) {
      await client.until(() => named(client, 'trade').length >= 3);
      expect(named(client, 'trade').map((e) => (e.data as { tradeId: string }).tradeId)).toEqual([
        'mp-t1',
        'mp-t2',
        'mp-t3',
      ]);
    }
    // The same ids on both processes: one stored sequence.
    expect(remote.events.map((e) => e.id).filter((id) => /^m\.\d+$/.test(id ?? ''))).toEqual(
      local.events.map((e) => e.id).filter((id) => /^m\.\d+$/.test(id ?? '')),
    );
  });

  it.runIf(shared)('the stream limits count both processes’ streams together (Redis)', async () => {
    const { key } = await ctx.createAccount({ mode: 'sandbox' });
    const opened = [
      await stream(there, key, '/stream/markets?ids=mp-a'),
      await stream(here, key, '/stream/prices?symbols=SOL'),
      await stream(there, key, '/webhooks/stream'),
    ];
    for (const client of opened) expect(client.response.status).toBe(200);
    for (const base of [here, there]) {
      const refused = await fetch(`${base}/stream/markets?ids=mp-a`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({
        code: 'STREAM_LIMIT_EXCEEDED',
        details: { limit: 'perKey' },
      });
    }
  });
});
