import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { RedisStreamSlots } from '../../src/http/event-stream/redis-slots.js';
import { LEASE_MS, LocalStreamSlots } from '../../src/http/event-stream/slots.js';
import { silentLog } from '../../src/logger.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext, testConfig } from '../helpers/context.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { probeStreamRoute } from '../helpers/probe-routes.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';
import { eventually, type StreamApp, startStreamApp } from './event-stream-fixture.js';

/**
 * The limits of open event streams (docs/api.md#event-streams): per key, per account, per client
 * address and per process, each refused with 429 STREAM_LIMIT_EXCEEDED naming it; the webhook stream
 * and the others count together; with Redis, every limit but the per-process one holds across API
 * instances, and a stream's slots go back when it closes or, its instance dead, when its lease ends.
 */

const refusal = (limit: string, max: number, open = max) => ({
  code: 'STREAM_LIMIT_EXCEEDED',
  details: { limit, max, open },
});

describe('the settings', () => {
  it('default to 3 per key, 10 per account, 20 per address, 1,000 per process, a keep-alive after 15 s', () => {
    expect(loadConfig({}).streams).toEqual({
      limits: { perKey: 3, perAccount: 10, perAddress: 20, perProcess: 1000 },
      heartbeatMs: 15_000,
    });
  });

  it('the webhook stream’s old names still work; set beside the new names they must agree', () => {
    const old = loadConfig({
      WEBHOOK_STREAMS_PER_KEY: '5',
      WEBHOOK_STREAMS_MAX: '50',
      WEBHOOK_STREAM_HEARTBEAT_MS: '20000',
    }).streams;
    expect(old).toEqual({
      limits: { perKey: 5, perAccount: 10, perAddress: 20, perProcess: 50 },
      heartbeatMs: 20_000,
    });
    expect(loadConfig({ STREAMS_PER_KEY: '5', WEBHOOK_STREAMS_PER_KEY: '5' }).streams.limits.perKey).toBe(5);
    expect(() => loadConfig({ STREAMS_PER_KEY: '4', WEBHOOK_STREAMS_PER_KEY: '5' })).toThrow(
      new ConfigError(
        'Invalid configuration: STREAMS_PER_KEY and WEBHOOK_STREAMS_PER_KEY (its old name) disagree; set only STREAMS_PER_KEY',
      ),
    );
  });
});

describe('each limit, in one process', () => {
  let server: StreamApp;
  const clients: OpenEventStream[] = [];
  beforeAll(async () => {
    server = await startStreamApp({ limits: { perKey: 2, perAccount: 3, perAddress: 4, perProcess: 6 } });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await eventually(() => server.streams.size === 0);
  });
  afterAll(() => server.close());

  const open = async (key: string, account: string, address: string) => {
    const client = await openEventStream(server.url(`?key=${key}&account=${account}`), {
      'x-test-address': address,
    });
    clients.push(client);
    return client.response;
  };
  const admitted = async (...owners: [string, string, string][]) => {
    for (const owner of owners) expect((await open(...owner)).status).toBe(200);
  };

  it('per key: the third stream of a key is refused; closing one frees its place', async () => {
    await admitted(['k1', 'a1', 'ip1'], ['k1', 'a1', 'ip2']);
    const third = await open('k1', 'a1', 'ip3');
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBeNull();
    expect(await third.json()).toMatchObject({
      ...refusal('perKey', 2),
      error: 'This key already holds 2 open event streams (at most 2); close one first',
    });
    await clients[0]?.close();
    await eventually(() => server.streams.size === 1);
    expect((await open('k1', 'a1', 'ip3')).status).toBe(200);
  });

  it('per account: four streams over two keys of one account, the fourth refused', async () => {
    await admitted(['k1', 'a1', 'ip1'], ['k1', 'a1', 'ip2'], ['k2', 'a1', 'ip3']);
    const fourth = await open('k2', 'a1', 'ip4');
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toMatchObject(refusal('perAccount', 3));
  });

  it('per client address: the fifth stream from one address, whatever the accounts, refused', async () => {
    await admitted(['k1', 'a1', 'ip1'], ['k2', 'a2', 'ip1'], ['k3', 'a3', 'ip1'], ['k4', 'a4', 'ip1']);
    const fifth = await open('k5', 'a5', 'ip1');
    expect(fifth.status).toBe(429);
    expect(await fifth.json()).toMatchObject(refusal('perAddress', 4));
  });

  it('per process: the seventh stream of the server refused, with Retry-After (another instance may answer)', async () => {
    for (let i = 0; i < 6; i++) await admitted([`k${i}`, `a${i}`, `ip${i}`]);
    const seventh = await open('k9', 'a9', 'ip9');
    expect(seventh.status).toBe(429);
    expect(seventh.headers.get('retry-after')).toBe('5');
    expect(await seventh.json()).toMatchObject({
      ...refusal('perProcess', 6),
      error: 'This server holds its limit of 6 open event streams; retry (another instance may answer)',
    });
  });
});

const shared = await redisReachable(REDIS_URL);

describe('across two API instances on one database and one Redis', () => {
  let ctx: TestContext;
  let other: FastifyInstance;
  const bases: string[] = [];
  const clients: OpenEventStream[] = [];
  const config = {
    REDIS_URL,
    STREAMS_PER_KEY: '2',
    STREAMS_PER_ACCOUNT: '3',
    STREAMS_PER_ADDRESS: '4',
    STREAMS_PER_PROCESS: '5',
    // The tests choose their client's address (X-Forwarded-For), so that runs sharing the Redis do not meet.
    TRUSTED_PROXIES: '127.0.0.1/32',
  };

  beforeAll(async () => {
    ctx = await createTestContext({ config, extraRoutes: probeStreamRoute });
    other = await buildApp({
      config: testConfig(config),
      db: ctx.database.db,
      clock: ctx.clock,
      callbacks: webhookOutbox,
      extraRoutes: probeStreamRoute,
    });
    for (const app of [ctx.app, other]) {
      await app.listen({ host: '127.0.0.1', port: 0 });
      bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1`);
    }
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await eventually(() => ctx.app.services.streams.size + other.services.streams.size === 0);
  });
  afterAll(async () => {
    await other.close();
    await ctx.close();
  });

  const address = () => `198.18.${randomInt(256)}.${randomInt(256)}`;
  /** A stream on instance 0 or 1: the webhook stream or the probe stream, which count together. */
  const open = async (instance: 0 | 1, key: string, from: string, path = '/webhooks/stream') => {
    const client = await openEventStream(`${bases[instance]}${path}`, {
      authorization: `Bearer ${key}`,
      'x-forwarded-for': from,
    });
    clients.push(client);
    return client.response;
  };
  // Without Redis each instance counts on its own (the fallback), and the second instance admits.
  const across = shared ? 429 : 200;

  it('per key: two streams on two instances (webhook and probe) fill it; closing one frees it', async () => {
    const { key } = await ctx.createAccount();
    const from = address();
    expect((await open(0, key, from)).status).toBe(200);
    expect((await open(1, key, from, '/test/stream')).status).toBe(200);
    const third = await open(0, key, from, '/test/stream');
    expect(third.status).toBe(across);
    if (!shared) return;
    expect(await third.json()).toMatchObject(refusal('perKey', 2));
    await clients[1]?.close();
    await eventually(() => other.services.streams.size === 0);
    expect((await open(0, key, from)).status).toBe(200);
  });

  it('per account: three keys of one account over both instances fill it', async () => {
    const account = await ctx.createAccount();
    const keys = [
      account.key,
      (await ctx.addKey(account.accountId)).key,
      (await ctx.addKey(account.accountId)).key,
    ];
    const from = address();
    expect((await open(0, keys[0] as string, from)).status).toBe(200);
    expect((await open(1, keys[1] as string, from)).status).toBe(200);
    expect((await open(0, keys[2] as string, from, '/test/stream')).status).toBe(200);
    const fourth = await open(1, keys[2] as string, from);
    expect(fourth.status).toBe(across);
    if (shared) expect(await fourth.json()).toMatchObject(refusal('perAccount', 3));
  });

  it('per client address: four accounts from one address over both instances fill it', async () => {
    const from = address();
    for (let i = 0; i < 4; i++) {
      const { key } = await ctx.createAccount();
      expect((await open(i % 2 === 0 ? 0 : 1, key, from)).status).toBe(200);
    }
    const { key } = await ctx.createAccount();
    const fifth = await open(1, key, from, '/test/stream');
    expect(fifth.status).toBe(across);
    if (shared) expect(await fifth.json()).toMatchObject(refusal('perAddress', 4));
  });

  it('per process: five streams fill one instance; the other still admits', async () => {
    for (let i = 0; i < 5; i++) {
      const { key } = await ctx.createAccount();
      expect((await open(0, key, address())).status).toBe(200);
    }
    const { key } = await ctx.createAccount();
    const sixth = await open(0, key, address());
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toMatchObject(refusal('perProcess', 5));
    expect((await open(1, key, address())).status).toBe(200);
  });

  it.runIf(shared)('an open stream renews its slots: they outlast their first lease', async () => {
    const { key } = await ctx.createAccount();
    const from = address();
    expect((await open(0, key, from)).status).toBe(200);
    expect((await open(0, key, from, '/test/stream')).status).toBe(200);
    ctx.clock.advance(LEASE_MS - 10_000);
    await ctx.app.services.streams.sweep();
    ctx.clock.advance(LEASE_MS - 10_000);
    const third = await open(1, key, from);
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject(refusal('perKey', 2));
  });

  it.runIf(shared)('an instance that dies holding streams: its slots end with their lease', async () => {
    const { key, keyId, accountId } = await ctx.createAccount();
    const from = address();
    // A crashed instance: it took two slots of the key, then neither renewed nor released them.
    const dead = new RedisStreamSlots(REDIS_URL, new LocalStreamSlots(), silentLog);
    expect(await dead.waitUntilReady(2000)).toBe(true);
    const now = ctx.clock.now().getTime();
    for (const id of ['str_dead_1', 'str_dead_2']) {
      const scopes = [
        { limit: 'perKey' as const, owner: keyId, max: 2 },
        { limit: 'perAccount' as const, owner: accountId, max: 3 },
        { limit: 'perAddress' as const, owner: from, max: 4 },
      ];
      expect(await dead.take(id, scopes, now)).toBeNull();
    }
    await dead.close();
    const refused = await open(0, key, from);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject(refusal('perKey', 2));
    ctx.clock.advance(LEASE_MS - 1);
    expect((await open(1, key, from)).status).toBe(429);
    ctx.clock.advance(1);
    expect((await open(1, key, from)).status).toBe(200);
    expect((await open(0, key, from)).status).toBe(200);
  });
});
