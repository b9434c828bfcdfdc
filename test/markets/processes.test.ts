import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

/**
 * Markets in real processes on PostgreSQL. The lifecycle: a worker killed with SIGKILL while
 * resolving a market (its price venue hangs) leaves it to another worker after the lease, which
 * resolves it once. Derived work: a `sibyl serve` killed after its chunks committed and before their
 * candles and stream events did leaves them to a `sibyl work` process, which derives them once.
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

describe.runIf(usingPostgres)('derived work across processes (PostgreSQL)', () => {
  it('a serve process killed before its chunks’ derived work committed leaves it to a worker, done once', async () => {
    const TOKEN = 'derive-admin-token-0123456789';
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const common = { DATABASE_URL: ctx.database.location, DB_POOL_SIZE: '4', MARKETS_DERIVE_AFTER_MS: '0' };
    const db = ctx.database.db;
    expect(await ingestText(db, ndjson([marketCreated({ id: 'killed-derive' })]))).toMatchObject({
      refused: 0,
    });
    const serve = await startService(
      'serve',
      { ...common, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: TOKEN },
      httpReady(base),
    );
    workers.push(serve);

    // The market stream's lock held here: the service's derived work waits for it, uncommitted.
    const holder = new PostgresDatabase(ctx.database.location, { poolSize: 1 });
    const count = async (sql: string) => Number((await db.query<{ n: number }>(sql))[0]?.n);
    try {
      await holder.query('SELECT pg_advisory_lock(7881694946571531629)');
      const trades = Array.from({ length: 2_500 }, (_, i) =>
        event('trade', new Date(Date.parse('2026-03-02T10:00:00Z') + i * 1_500).toISOString(), {
          marketId: 'killed-derive',
          tradeId: `kd-${i}`,
          outcome: i % 2,
          price: 1 + ((i * 61) % 9_999),
          shares: String(1 + i),
          buyer: wallet('kd-buyer'),
          seller: wallet('kd-seller'),
        }),
      );
      void fetch(`${base}/api/v1/admin/markets/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
        body: ndjson(trades),
      }).catch(() => null);
      const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event = 'advisory'`;
      await until(async () => (await count(waiting)) === 1);
      expect(await count('SELECT count(*)::int AS n FROM market_trades')).toBe(2_500); // committed
      await serve.kill();
      await holder.query('SELECT pg_advisory_unlock(7881694946571531629)');
      await until(async () => (await count(waiting)) === 0);
    } finally {
      await holder.close();
    }
    // Its three chunks' rows are left, with none of their candles or stream events.
    expect(await count('SELECT count(*)::int AS n FROM market_derive_backlog')).toBe(3);
    expect(await count('SELECT count(*)::int AS n FROM market_candles')).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM market_stream_events WHERE kind = 'trade'`)).toBe(0);

    workers.push(await startService('work', common, async () => true));
    await until(async () => (await count('SELECT count(*)::int AS n FROM market_derive_backlog')) === 0);
    expect(await count(`SELECT count(*)::int AS n FROM market_stream_events WHERE kind = 'trade'`)).toBe(
      2_500,
    );
    expect(
      await count(
        `SELECT count(DISTINCT data::json->>'tradeId')::int AS n FROM market_stream_events WHERE kind = 'trade'`,
      ),
    ).toBe(2_500);
    const wrong = `WITH ref AS (
        SELECT market_id, outcome_index, w.width,
               date_bin(make_interval(secs => w.width), at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
               (array_agg(price ORDER BY at, trade_id))[1] AS open, max(price) AS high, min(price) AS low,
               (array_agg(price ORDER BY at DESC, trade_id DESC))[1] AS close, sum(shares) AS volume,
               count(*) AS trades
          FROM market_trades CROSS JOIN (VALUES (60), (3600), (86400)) AS w (width)
         GROUP BY 1, 2, 3, 4)
      SELECT count(*)::int AS n FROM ref FULL JOIN market_candles c USING (market_id, outcome_index, width, bucket)
       WHERE (ref.open, ref.high, ref.low, ref.close, ref.volume, ref.trades)
             IS DISTINCT FROM (c.open, c.high, c.low, c.close, c.volume, c.trades)`;
    expect(await count(wrong)).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM market_candles')).toBeGreaterThan(0);
  });
});
