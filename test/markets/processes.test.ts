import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import { marketCreated, ndjson } from './events.js';

/**
 * The market lifecycle in real `sibyl work` processes on PostgreSQL: a worker killed with SIGKILL
 * while resolving a market (its price venue hangs) leaves it to another worker after the lease,
 * which resolves it once.
 */

let ctx: TestContext;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext();
});
afterAll(async () => {
  for (const worker of workers) await worker.kill();
  if (!usingPostgres) return;
  await ctx.close();
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function status(id: string) {
  const [row] = await ctx.database.db.query<{
    status: string;
    winning_outcome_index: number | null;
    resolution_details: { transitions: { to: string }[] };
  }>('SELECT status, winning_outcome_index, resolution_details FROM markets WHERE id = $1', [id]);
  return row;
}

describe.runIf(usingPostgres)('market lifecycle across worker processes (PostgreSQL)', () => {
  it('a worker killed while resolving leaves the market to another, which resolves it once', async () => {
    let calls = 0;
    let hang = true;
    const venue: FakeServer = await startFakeServer(() => {
      calls++;
      if (hang) return { delayMs: 60_000, body: {} };
      return {
        body: { symbol: 'SOLUSDT', lastPrice: '187.25', quoteVolume: '250000000.00', closeTime: Date.now() },
      };
    });
    try {
      const closes = new Date(Date.now() + 500).toISOString();
      const created = marketCreated(
        {
          id: 'killed-pf',
          closesAt: closes,
          resolution: {
            type: 'PRICE_FEED',
            symbol: 'SOL',
            condition: 'above',
            targetPrice: 100,
            tolerance: 1,
          },
        },
        { at: new Date(Date.now() - 60_000).toISOString(), sandbox: false },
      );
      expect(await ingestText(ctx.database.db, ndjson([created]))).toMatchObject({ refused: 0 });
      const env = {
        DATABASE_URL: ctx.database.location,
        DB_POOL_SIZE: '4',
        PRICE_VENUES: 'binance',
        BINANCE_BASE_URL: venue.url,
        PRICE_VENUE_TIMEOUT_MS: '120000',
        PRICE_MIN_SOURCES: '1',
        MARKETS_LIFECYCLE_LEASE_MS: '2000',
      };
      const doomed = await startService('work', env, async () => true);
      workers.push(doomed);
      await until(async () => calls > 0);
      expect(await status('killed-pf')).toMatchObject({ status: 'RESOLVING' });
      await doomed.kill();
      hang = false;
      workers.push(await startService('work', env, async () => true));
      await until(async () => (await status('killed-pf'))?.status === 'FINALIZED');
      const done = await status('killed-pf');
      expect(done?.winning_outcome_index).toBe(0);
      expect(done?.resolution_details.transitions.map((t) => t.to)).toEqual([
        'CLOSED',
        'RESOLVING',
        'FINALIZED',
      ]);
    } finally {
      await venue.close();
    }
  });
});
