import { afterAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { marketCreated, ndjson } from './events.js';

/**
 * Market cursors across real `sibyl serve` processes on PostgreSQL (docs/markets.md#cursors): two
 * API processes started at once on a database without a cursor key agree on one, so a page read
 * from one continues on the other, and a process started later accepts the cursors of the first.
 */

const services: ServiceProcess[] = [];
let ctx: TestContext | undefined;

afterAll(async () => {
  for (const service of services) await service.kill();
  await ctx?.close();
});

async function serve(location: string): Promise<string> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  services.push(
    await startService(
      'serve',
      { DATABASE_URL: location, DB_POOL_SIZE: '4', PORT: String(port), HOST: '127.0.0.1' },
      httpReady(base),
    ),
  );
  return base;
}

describe.runIf(usingPostgres)('market cursors across API processes (PostgreSQL)', () => {
  it('two processes started at once share one key; a third, started later, accepts their cursors', async () => {
    ctx = await createTestContext();
    const db = ctx.database.db;
    const ids = ['cp-a', 'cp-b', 'cp-c', 'cp-d', 'cp-e'];
    const events = ids.map((id, i) => marketCreated({ id }, { at: `2026-03-0${i + 1}T10:00:00Z` }));
    expect(await ingestText(db, ndjson(events))).toMatchObject({ refused: 0 });
    const { key } = await ctx.createAccount({ balanceUsd: '10.00' });
    // As on a database no process has started on yet.
    await db.query("DELETE FROM instance_settings WHERE name = 'cursor_key'");

    const [first, second] = await Promise.all([serve(ctx.database.location), serve(ctx.database.location)]);
    const get = async (base: string, query: string) => {
      const response = await fetch(`${base}/api/v1/markets?pageSize=2${query}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status, `${base} ${query}`).toBe(200);
      return (await response.json()) as { markets: { id: string }[]; nextCursor: string | null };
    };
    const page1 = await get(first as string, '');
    const page2 = await get(second as string, `&cursor=${page1.nextCursor}`);
    const third = await serve(ctx.database.location);
    const page3 = await get(third, `&cursor=${page2.nextCursor}`);
    expect([...page1.markets, ...page2.markets, ...page3.markets].map((m) => m.id)).toEqual(
      [...ids].reverse(),
    );
    expect(page3.nextCursor).toBeNull();
    const keys = await db.query("SELECT value FROM instance_settings WHERE name = 'cursor_key'");
    expect(keys).toHaveLength(1);
  });
});
