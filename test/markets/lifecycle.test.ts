import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../../src/ai/resolver.js';
import { createContext } from '../../src/context.js';
import { silentLog } from '../../src/logger.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import {
  type ClaimedMarket,
  lifecycleQueueHandler,
  priceOutcome,
} from '../../src/markets/lifecycle/lifecycle.js';
import { resolveByAdmin } from '../../src/markets/lifecycle/status.js';
import { createPriceService } from '../../src/prices/index.js';
import { sandboxMidPrice } from '../../src/prices/sandbox/feed.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { event, marketCreated, ndjson } from './events.js';

/**
 * The market lifecycle with a manual clock and the sandbox feed: markets close at closesAt (not
 * before), become RESOLVING, and PRICE_FEED and AI markets resolve once, automatically — or stay
 * RESOLVING, with the reason recorded, for an administrator.
 */

let ctx: TestContext;
let queue: WorkQueue<ClaimedMarket>;
let handler: ReturnType<typeof lifecycleQueueHandler>;
const CLOSES = Date.parse('2026-06-15T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(CLOSES - 3600_000));
  handler = lifecycleQueueHandler({
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    prices: createPriceService(ctx.config.prices, ctx.clock, []),
    resolver: createResolver(ctx.config.ai, ctx.clock),
    settings: { lifecycleConcurrency: 10, lifecycleLeaseMs: 120_000 },
  });
  queue = new WorkQueue(handler, { db: ctx.database.db, clock: ctx.clock, log: silentLog });
});
afterAll(async () => {
  await ctx.close();
});

async function create(id: string, resolution: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const created = marketCreated(
    { id, closesAt: iso(CLOSES), resolution, ...extra },
    { at: iso(CLOSES - 86_400_000) },
  );
  expect(await ingestText(ctx.database.db, ndjson([created]))).toMatchObject({ refused: 0 });
}

async function market(id: string) {
  const [row] = await ctx.database.db.query<{
    status: string;
    winning_outcome_index: number | null;
    resolution_details: {
      transitions?: { from: string; to: string; by: string }[];
      autoResolution?: Record<string, unknown>;
      resolvedBy?: string;
    } | null;
  }>('SELECT status, winning_outcome_index, resolution_details FROM markets WHERE id = $1', [id]);
  return row;
}

describe('market lifecycle', () => {
  it('PRICE_FEED markets: above, below, inside the tolerance band, no valid price', async () => {
    const mid = sandboxMidPrice('SOL', CLOSES);
    await create('pf-above-yes', {
      type: 'PRICE_FEED',
      symbol: 'SOL',
      condition: 'above',
      targetPrice: mid * 0.5,
      tolerance: 1,
    });
    await create('pf-above-no', {
      type: 'PRICE_FEED',
      symbol: 'SOL',
      condition: 'above',
      targetPrice: mid * 2,
      tolerance: 1,
    });
    await create('pf-below-yes', {
      type: 'PRICE_FEED',
      symbol: 'SOL',
      condition: 'below',
      targetPrice: mid * 2,
      tolerance: 1,
    });
    await create('pf-band', {
      type: 'PRICE_FEED',
      symbol: 'SOL',
      condition: 'above',
      targetPrice: mid,
      tolerance: mid * 0.05,
    });
    await create('pf-no-price', {
      type: 'PRICE_FEED',
      symbol: '9n4nbM75f5Ui33ZbPYXn59EwSgE8CGsHtAeTH5YFeJ9E',
      condition: 'above',
      targetPrice: 1,
      tolerance: 0,
    });

    expect(await queue.drain()).toBe(0); // not before closesAt
    ctx.clock.set(iso(CLOSES));
    expect(await queue.drain()).toBe(5);

    expect(await market('pf-above-yes')).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 0 });
    expect(await market('pf-above-no')).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 1 });
    expect(await market('pf-below-yes')).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 0 });
    const band = await market('pf-band');
    expect(band).toMatchObject({ status: 'RESOLVING', winning_outcome_index: null });
    expect(band?.resolution_details?.autoResolution).toMatchObject({
      reason: 'the price is inside the tolerance band',
    });
    const none = await market('pf-no-price');
    expect(none).toMatchObject({ status: 'RESOLVING', winning_outcome_index: null });
    expect(String(none?.resolution_details?.autoResolution?.reason)).toMatch(/^no valid price/);

    const yes = await market('pf-above-yes');
    expect(yes?.resolution_details?.transitions?.map((t) => [t.from, t.to, t.by])).toEqual([
      ['OPEN', 'CLOSED', 'lifecycle'],
      ['CLOSED', 'RESOLVING', 'lifecycle'],
      ['RESOLVING', 'FINALIZED', 'lifecycle'],
    ]);
    expect(yes?.resolution_details?.resolvedBy).toBe('lifecycle');
    // Tried once: RESOLVING markets left for an administrator are not tried again.
    ctx.clock.set(iso(CLOSES + 3600_000));
    expect(await queue.drain()).toBe(0);
  });

  it('AI markets resolve through the sandbox models; not determinable stays RESOLVING', async () => {
    const at = CLOSES + 2 * 3600_000;
    const ai = (id: string, directive: string) =>
      ingestText(
        ctx.database.db,
        ndjson([
          marketCreated(
            {
              id,
              closesAt: iso(at),
              description: `Resolves by AI. ${directive}`,
              resolution: { type: 'AI' },
            },
            { at: iso(CLOSES - 86_400_000) },
          ),
        ]),
      );
    await ai('ai-decided', '[sandbox:votes=1,1,1,0]');
    await ai('ai-undetermined', '[sandbox:votes=?,?,?,x]');
    ctx.clock.set(iso(at));
    expect(await queue.drain()).toBe(2);
    expect(await market('ai-decided')).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 1 });
    const undetermined = await market('ai-undetermined');
    expect(undetermined).toMatchObject({ status: 'RESOLVING', winning_outcome_index: null });
    expect(undetermined?.resolution_details?.autoResolution).toMatchObject({
      method: 'ai',
      winningOutcomeIndex: null,
    });

    // The detail's aiPrediction shows the consensus.
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const detail = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/ai-decided' });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().prediction.aiPrediction).toMatchObject({
      winningOutcomeIndex: 1,
      canDetermine: true,
    });
  });

  it('an administrator resolving while the worker holds the market: the administrator’s outcome stands', async () => {
    const at = CLOSES + 4 * 3600_000;
    const mid = sandboxMidPrice('SOL', at);
    await create(
      'race',
      { type: 'PRICE_FEED', symbol: 'SOL', condition: 'above', targetPrice: mid * 0.5, tolerance: 0 },
      { closesAt: iso(at) },
    );
    ctx.clock.set(iso(at));
    const [claimed] = await handler.claim(10, ctx.clock.now());
    expect(claimed?.id).toBe('race');
    await resolveByAdmin(createContext(ctx.database.db, ctx.clock), { market: 'race', outcome: '1' });
    await handler.process(claimed as ClaimedMarket);
    expect(await market('race')).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 1 });
  });

  it('a platform status newer than the closing stands, and the market is looked at again later, not at once', async () => {
    const at = CLOSES + 6 * 3600_000;
    await create('reopened', { type: 'ADMIN' }, { closesAt: iso(at) });
    // The platform says OPEN at a time later than the closing the worker will record.
    await ingestText(
      ctx.database.db,
      ndjson([event('market.status', iso(at + 3600_000), { marketId: 'reopened', status: 'OPEN' })]),
    );
    ctx.clock.set(iso(at));
    expect(await queue.drain()).toBe(1);
    expect(await market('reopened')).toMatchObject({ status: 'OPEN' });
    expect(await queue.drain()).toBe(0);
    ctx.clock.advance(60_000);
    expect(await queue.drain()).toBe(1);
  });

  it('markets the platform set CLOSED or RESOLVING itself are left to it', async () => {
    const at = CLOSES + 8 * 3600_000;
    await create(
      'platform-resolving',
      { type: 'PRICE_FEED', symbol: 'SOL', condition: 'above', targetPrice: 1, tolerance: 0 },
      { closesAt: iso(at) },
    );
    await ingestText(
      ctx.database.db,
      ndjson([
        event('market.status', iso(at - 60_000), { marketId: 'platform-resolving', status: 'RESOLVING' }),
      ]),
    );
    ctx.clock.set(iso(at + 60_000));
    await queue.drain(); // (the re-opened market of the test before is looked at again)
    expect(await market('platform-resolving')).toMatchObject({
      status: 'RESOLVING',
      winning_outcome_index: null,
    });
  });

  it('the tolerance rule', () => {
    expect(priceOutcome('above', 110, 100, 5)).toBe(0);
    expect(priceOutcome('above', 90, 100, 5)).toBe(1);
    expect(priceOutcome('above', 105, 100, 5)).toBe(null);
    expect(priceOutcome('below', 90, 100, 5)).toBe(0);
    expect(priceOutcome('below', 110, 100, 5)).toBe(1);
    expect(priceOutcome('below', 95, 100, 5)).toBe(null);
  });
});

describe('POST /ai/resolve { marketId }', () => {
  it('resolves a stored market by id or slug; an unknown one is 404', async () => {
    await create(
      'asked',
      { type: 'AI' },
      { slug: 'asked-slug', closesAt: iso(CLOSES + 30 * 86_400_000), description: '[sandbox:votes=0,0,0,1]' },
    );
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    for (const id of ['asked', 'asked-slug']) {
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/ai/resolve',
        payload: { marketId: id },
      });
      expect(response.statusCode).toBe(200);
    }
    const unknown = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: { marketId: 'nope' },
    });
    expect(unknown.statusCode).toBe(404);
    const [row] = await ctx.database.db.query<{ n: bigint }>(
      "SELECT count(*) AS n FROM ai_requests WHERE market_id = 'asked' AND question = 'Market asked'",
    );
    expect(Number(row?.n)).toBe(2);
  });
});
