import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../src/http/event-stream/slots.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

/**
 * The stream limits when an API process dies holding streams (docs/api.md#event-streams): a real
 * `sibyl serve` on the test's PostgreSQL and Redis opens a key's streams and is killed with SIGKILL
 * (no shutdown, nothing released); the key's slots stay taken — the other instance refuses — until
 * their lease ends.
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
