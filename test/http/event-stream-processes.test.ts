import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../src/http/event-stream/slots.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

/**
 * Event streams of a real `sibyl serve` process on the test's PostgreSQL (docs/api.md#event-streams):
 * stopped with SIGTERM, it tells its streams SHUTTING_DOWN before it exits; killed with SIGKILL (no
 * shutdown, nothing released) while holding a key's streams, their slots stay taken in Redis — the
 * other instance refuses — until their lease ends.
 */

const shared = await redisReachable(REDIS_URL);
let ctx: TestContext | undefined;
let service: ServiceProcess | undefined;
const clients: OpenEventStream[] = [];

afterAll(async () => {
  for (const client of clients) await client.close();
  await service?.kill();
  await ctx?.close();
});

describe.runIf(usingPostgres)('an API process stopped with SIGTERM (PostgreSQL)', () => {
  it('sends SHUTTING_DOWN on its open streams, ends them, and exits 0', async () => {
    const test = await createTestContext();
    let stopping: ServiceProcess | undefined;
    try {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      stopping = await startService(
        'serve',
        { DATABASE_URL: test.database.location, DB_POOL_SIZE: '4', PORT: String(port), HOST: '127.0.0.1' },
        httpReady(base),
      );
      const { key } = await test.createAccount();
      const client = await openEventStream(`${base}/api/v1/webhooks/stream`, {
        authorization: `Bearer ${key}`,
      });
      expect(client.response.status).toBe(200);
      const { child } = stopping;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      await client.finished();
      expect(client.events).toEqual([
        {
          event: 'error',
          id: undefined,
          data: {
            error: 'This server is shutting down; reconnect (another instance will answer)',
            code: 'SHUTTING_DOWN',
            requestId: client.response.headers.get('x-request-id'),
          },
        },
      ]);
      expect(await exited).toBe(0);
    } finally {
      await stopping?.kill();
      await test.close();
    }
  });
});

describe.runIf(usingPostgres && shared)('an API process killed with open streams (PostgreSQL, Redis)', () => {
  it('its slots are counted by the other instances until their lease ends, then given back', async () => {
    ctx = await createTestContext({ config: { REDIS_URL, STREAMS_PER_KEY: '2' } });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = await startService(
      'serve',
      {
        DATABASE_URL: ctx.database.location,
        DB_POOL_SIZE: '4',
        REDIS_URL,
        STREAMS_PER_KEY: '2',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      httpReady(base),
    );
    const { key } = await ctx.createAccount();
    for (let i = 0; i < 2; i++) {
      const client = await openEventStream(`${base}/api/v1/webhooks/stream`, {
        authorization: `Bearer ${key}`,
      });
      clients.push(client);
      expect(client.response.status).toBe(200);
    }
    await service.kill();

    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const here = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/api/v1/webhooks/stream`;
    const refused = await fetch(here, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      code: 'STREAM_LIMIT_EXCEEDED',
      details: { limit: 'perKey', max: 2, open: 2 },
    });
    // The dead process renewed its leases at the latest when it was killed, on its own clock.
    ctx.clock.set(new Date(Date.now() + LEASE_MS));
    const admitted = await openEventStream(here, { authorization: `Bearer ${key}` });
    clients.push(admitted);
    expect(admitted.response.status).toBe(200);
  });
});
