import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import type { TestContext } from '../helpers/context.js';
import { countEntries } from '../helpers/ledger.js';
import { event, marketCreated, ndjson, wallet } from '../markets/events.js';
import { named, type StreamService, startStreamService } from './service.js';

/**
 * GET /stream/markets (docs/streams.md#markets): a snapshot per market, then `market` on each change
 * of status, prices or probability, `trade` per trade, `resolved` on resolution; events stored with
 * ids in commit order, so that `Last-Event-ID` resumes after a cut; bad input refused before any
 * charge; the probability is the one GET /markets/{id} answers.
 */

let service: StreamService;
let ctx: TestContext;

beforeAll(async () => {
  service = await startStreamService();
  ctx = service.ctx;
});
afterAll(() => service.close());

const stream = (key: string, ids: string, headers: Record<string, string> = {}) =>
  service.open(`/stream/markets?ids=${ids}`, key, headers);

type MarketData = {
  id: string;
  status: string;
  outcomes: { index: number; lastPrice: number | null; probability: number }[];
  tradingStats: { totalTrades: number };
};

async function ingest(events: Record<string, unknown>[]): Promise<void> {
  const report = await ingestText(ctx.database.db, ndjson(events));
  expect(report).toMatchObject({ refused: 0 });
}

let tradeCount = 0;
function trade(marketId: string, price: number, at: string) {
  tradeCount += 1;
  return event('trade', at, {
    marketId,
    tradeId: `t-${marketId}-${tradeCount}`,
    outcome: 0,
    price,
    shares: '1000',
    buyer: wallet('buyer'),
    seller: wallet('seller'),
  });
}

describe('a market stream', () => {
  it('announces itself, sends a snapshot per market, then trades, changes and the resolution', async () => {
    await ingest([marketCreated({ id: 'ms-a' }), marketCreated({ id: 'ms-b' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const client = await stream(account.key, 'ms-b,ms-a,ms-b');
    expect(client.response.status).toBe(200);
    await client.until(() => named(client, 'market').length >= 2);
    expect(client.events[0]).toMatchObject({
      event: 'stream',
      data: { minuteUsd: '0.002', limits: { perKey: 3, perAccount: 10, perAddress: 20, markets: 50 } },
    });
    // Duplicates collapse; the order asked.
    const snapshot = named(client, 'market').map((e) => e.data as MarketData);
    expect(snapshot.map((m) => m.id)).toEqual(['ms-b', 'ms-a']);
    expect(snapshot[0]).toMatchObject({
      status: 'OPEN',
      outcomes: [
        { index: 0, label: 'Yes', lastPrice: null, probability: 0.5 },
        { index: 1, label: 'No', lastPrice: null, probability: 0.5 },
      ],
      tradingStats: { totalVolume: '0', totalTrades: 0 },
      resolution: null,
    });
    for (const e of named(client, 'market')) expect(e.id).toMatch(/^m\.\d+\.[12]$/);

    await ingest([trade('ms-a', 7000, '2026-03-02T10:00:00Z')]);
    await client.until(() => named(client, 'market').length >= 3);
    const [tradeEvent] = named(client, 'trade');
    expect(tradeEvent?.data).toMatchObject({ marketId: 'ms-a', outcome: 0, price: 7000, shares: '1000' });
    expect(tradeEvent?.data).toMatchObject({ at: '2026-03-02T10:00:00.000Z' });
    const change = named(client, 'market').at(-1)?.data as MarketData;
    expect(change.id).toBe('ms-a');
    expect(change.outcomes[0]).toMatchObject({ lastPrice: 7000 });
    expect(change.tradingStats.totalTrades).toBe(1);
    // The probability is the detail's.
    const detail = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/ms-a' });
    expect(change.outcomes.map((o) => o.probability)).toEqual(
      detail.json().outcomes.map((o: { probability: number }) => o.probability),
    );

    // A position changes neither status, prices nor probability: no event.
    await ingest([
      event('position', '2026-03-02T10:01:00Z', {
        marketId: 'ms-a',
        wallet: wallet('holder'),
        outcome: 0,
        shares: '10',
        wagered: '100',
      }),
      event('market.status', '2026-03-02T11:00:00Z', { marketId: 'ms-b', status: 'CLOSED' }),
    ]);
    await client.until(() => named(client, 'market').length >= 4);
    expect(named(client, 'market').at(-1)?.data).toMatchObject({ status: 'CLOSED' });
    await ingest([
      event('market.resolved', '2026-03-02T12:00:00Z', { marketId: 'ms-b', winningOutcomeIndex: 1 }),
    ]);
    await client.until(() => named(client, 'resolved').length >= 1);
    expect(named(client, 'resolved')[0]?.data).toMatchObject({
      marketId: 'ms-b',
      status: 'FINALIZED',
      winningOutcomeIndex: 1,
      winningOutcomeLabel: 'No',
    });
    const live = client.events.filter((e) => e.id?.match(/^m\.\d+$/));
    const ids = live.map((e) => Number(e.id?.slice(2)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    // Exactly what was sent: the trade, ms-a's change, ms-b closed, then its FINALIZED state and `resolved`.
    expect(live.map((e) => e.event)).toEqual(['trade', 'market', 'market', 'market', 'resolved']);
    await client.close();
  });

  it("states each probability as GET /markets/{id} does, the book's mid included (one rule)", async () => {
    await ingest([marketCreated({ id: 'ms-book' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const client = await stream(account.key, 'ms-book');
    await client.until(() => named(client, 'market').length >= 1);
    const order = (orderId: string, outcome: number, side: string, price: number) =>
      event('order.placed', '2026-03-02T09:00:00Z', {
        marketId: 'ms-book',
        orderId,
        wallet: wallet(orderId),
        outcome,
        side,
        price,
        shares: '100',
      });
    await ingest([
      order('ob-1', 0, 'bid', 5800),
      order('ob-2', 0, 'ask', 6600),
      { ...trade('ms-book', 3000, '2026-03-02T09:01:00Z'), outcome: 1 },
    ]);
    await client.until(
      () => (named(client, 'market').at(-1)?.data as MarketData | undefined)?.tradingStats.totalTrades === 1,
    );
    const latest = named(client, 'market').at(-1)?.data as MarketData;
    const streamed = latest.outcomes.map((o) => o.probability);
    const detail = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets/ms-book' });
    expect(streamed).toEqual(detail.json().outcomes.map((o: { probability: number }) => o.probability));
    // Outcome 0 from its book's mid (0.62), outcome 1 from its last trade (0.30), scaled to 1.
    expect(streamed).toEqual([0.673913, 0.326087]);
    await client.close();
  });

  it('resumes after a cut with what it missed (Last-Event-ID), each event once', async () => {
    await ingest([marketCreated({ id: 'ms-r' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const first = await stream(account.key, 'ms-r');
    await first.until(() => named(first, 'market').length >= 1);
    await ingest([trade('ms-r', 6000, '2026-03-03T10:00:00Z')]);
    await first.until(() => named(first, 'trade').length >= 1);
    const last = first.events.at(-1)?.id as string;
    await first.close();
    // Missed while away: two trades.
    await ingest([trade('ms-r', 6100, '2026-03-03T10:01:00Z'), trade('ms-r', 6200, '2026-03-03T10:02:00Z')]);
    const again = await stream(account.key, 'ms-r', { 'last-event-id': last });
    await again.until(() => named(again, 'trade').length >= 2);
    expect(again.comments.some((c) => c.includes(`the events after ${last} first`))).toBe(true);
    expect(named(again, 'trade').map((e) => (e.data as { price: number }).price)).toEqual([6100, 6200]);
    // No snapshot: the changes it missed.
    expect(named(again, 'market').every((e) => /^m\.\d+$/.test(e.id ?? ''))).toBe(true);
    await again.close();

    // An id no longer kept (or never issued): a new snapshot, said so.
    const old = await stream(account.key, 'ms-r', { 'last-event-id': 'm.999999999' });
    await old.until(() => named(old, 'market').length >= 1);
    expect(old.comments.some((c) => c.includes('a new snapshot'))).toBe(true);
    expect(named(old, 'market')[0]?.data).toMatchObject({ outcomes: [{ lastPrice: 6200 }, {}] });
    await old.close();
  });

  it("resumes from the middle of a transaction's trades (stored as one row): the rest of them, each once", async () => {
    await ingest([marketCreated({ id: 'ms-mid' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const first = await stream(account.key, 'ms-mid');
    await first.until(() => named(first, 'market').length >= 1);
    await ingest([
      trade('ms-mid', 6100, '2026-03-06T10:01:00Z'),
      trade('ms-mid', 6200, '2026-03-06T10:02:00Z'),
      trade('ms-mid', 6300, '2026-03-06T10:03:00Z'),
    ]);
    await first.until(() => named(first, 'market').length >= 2);
    const trades = named(first, 'trade');
    expect(trades.map((e) => (e.data as { price: number }).price)).toEqual([6100, 6200, 6300]);
    const ids = trades.map((e) => BigInt(e.id?.slice(2) ?? '0'));
    expect(ids).toEqual([ids[0] ?? 0n, (ids[0] ?? 0n) + 1n, (ids[0] ?? 0n) + 2n]);
    await first.close();

    // Cut after the first of the three: the second and third, then the market's state, no snapshot.
    const again = await stream(account.key, 'ms-mid', { 'last-event-id': trades[0]?.id as string });
    await again.until(() => named(again, 'market').length >= 1);
    expect(again.comments.some((c) => c.includes(`the events after ${trades[0]?.id} first`))).toBe(true);
    expect(named(again, 'trade').map((e) => [e.id, (e.data as { price: number }).price])).toEqual([
      [trades[1]?.id, 6200],
      [trades[2]?.id, 6300],
    ]);
    expect(named(again, 'market').map((e) => e.id)).toEqual([named(first, 'market')[1]?.id]);
    await again.close();
  });

  it('resumes with other ids: each market the replay does not bring up to date gets its state first', async () => {
    await ingest([
      marketCreated({ id: 'ms-c1' }),
      marketCreated({ id: 'ms-c2' }),
      marketCreated({ id: 'ms-c3' }),
    ]);
    await ingest([trade('ms-c3', 4400, '2026-03-05T09:00:00Z')]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const first = await stream(account.key, 'ms-c1');
    await first.until(() => named(first, 'market').length >= 1);
    await ingest([trade('ms-c1', 6000, '2026-03-05T10:00:00Z')]);
    await first.until(() => named(first, 'trade').length >= 1);
    const last = first.events.at(-1)?.id as string;
    await first.close();
    // While away: ms-c2 trades (the replay has its new state); ms-c1 and ms-c3 do not change.
    await ingest([trade('ms-c2', 5500, '2026-03-05T10:01:00Z')]);
    const again = await stream(account.key, 'ms-c1,ms-c2,ms-c3', { 'last-event-id': last });
    await again.until(() => named(again, 'trade').length >= 1);
    await again.until(() => new Set(named(again, 'market').map((e) => (e.data as MarketData).id)).size >= 3);
    expect(
      again.comments.some((c) =>
        c.includes(`the events after ${last} first, after the state of ms-c1, ms-c3`),
      ),
    ).toBe(true);
    const n = last.slice(2);
    const markets = named(again, 'market');
    // ms-c1 and ms-c3 as they are (unchanged since the resume point: m.<n>.<k>, k their place in ids),
    // then the replay: ms-c2's trade and its new state.
    expect(markets.map((e) => [e.id?.replace(/^m\.\d+$/, 'live'), (e.data as MarketData).id])).toEqual([
      [`m.${n}.1`, 'ms-c1'],
      [`m.${n}.3`, 'ms-c3'],
      ['live', 'ms-c2'],
    ]);
    expect(markets[0]?.data).toMatchObject({
      outcomes: [{ lastPrice: 6000 }, {}],
      tradingStats: { totalTrades: 1 },
    });
    expect(markets[1]?.data).toMatchObject({
      outcomes: [{ lastPrice: 4400 }, {}],
      tradingStats: { totalTrades: 1 },
    });
    expect(named(again, 'trade').map((e) => (e.data as { marketId: string }).marketId)).toEqual(['ms-c2']);
    // Then live: a trade of a market it did not follow before reaches it, once.
    await ingest([trade('ms-c3', 4500, '2026-03-05T10:02:00Z')]);
    await again.until(() => named(again, 'trade').length >= 2);
    expect(named(again, 'trade').map((e) => (e.data as { price: number }).price)).toEqual([5500, 4500]);
    const resumedAfter = again.events.filter((e) => e.id?.startsWith(`m.${n}.`)).at(-1)?.id as string;
    await again.close();

    // Its last state event (k = 3, the last of ids) is a resume point like any: what came after it.
    const third = await stream(account.key, 'ms-c1,ms-c2,ms-c3', { 'last-event-id': resumedAfter });
    await third.until(() => named(third, 'trade').length >= 2);
    expect(named(third, 'trade').map((e) => (e.data as { price: number }).price)).toEqual([5500, 4500]);
    expect(named(third, 'market').map((e) => (e.data as MarketData).id)).toEqual(['ms-c1', 'ms-c2', 'ms-c3']);
    await third.close();
  });

  it('a stream that joins while events arrive misses none of them', async () => {
    await ingest([marketCreated({ id: 'ms-busy' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const watcher = await stream(account.key, 'ms-busy');
    await watcher.until(() => named(watcher, 'market').length >= 1);
    const writing = (async () => {
      for (let i = 0; i < 20; i++)
        await ingest([trade('ms-busy', 5000 + i, `2026-03-04T10:00:${String(i).padStart(2, '0')}Z`)]);
    })();
    const late = await stream(account.key, 'ms-busy');
    await writing;
    await watcher.until(() => named(watcher, 'trade').length >= 20);
    await late.until(
      () => (named(late, 'market').at(-1)?.data as MarketData | undefined)?.tradingStats.totalTrades === 20,
    );
    // The late stream's snapshot holds some trades; it gets every one after it, once, in order.
    const snapshotTrades =
      (named(late, 'market')[0]?.data as MarketData | undefined)?.tradingStats.totalTrades ?? -1;
    const prices = named(late, 'trade').map((e) => (e.data as { price: number }).price);
    expect(prices).toEqual(Array.from({ length: 20 - snapshotTrades }, (_, i) => 5000 + snapshotTrades + i));
    await watcher.close();
    await late.close();
  });
});

describe('a market that turns DRAFT', () => {
  it('leaves the stream as if deleted: the stream ends NOT_FOUND naming it, its trades never sent, nor a replay of them', async () => {
    await ingest([marketCreated({ id: 'ms-drafted' }), marketCreated({ id: 'ms-stays' })]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const client = await stream(account.key, 'ms-stays,ms-drafted');
    await client.until(() => named(client, 'market').length >= 2);
    const resumeFrom = named(client, 'market').at(-1)?.id as string;
    await ingest([
      event('market.status', '2026-03-02T10:00:00Z', { marketId: 'ms-drafted', status: 'DRAFT' }),
      trade('ms-drafted', 6600, '2026-03-02T10:00:01Z'),
    ]);
    await client.finished();
    expect(client.events.at(-1)).toEqual({
      event: 'error',
      id: undefined,
      data: {
        error: 'Market ms-drafted not found',
        code: 'NOT_FOUND',
        requestId: client.response.headers.get('x-request-id'),
      },
    });
    expect(named(client, 'trade')).toEqual([]);
    expect(named(client, 'market').map((e) => (e.data as MarketData).status)).toEqual(['OPEN', 'OPEN']);
    // As every route: a new stream of it is refused.
    const refused = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/markets?ids=ms-drafted',
    });
    expect(refused.statusCode).toBe(404);
    // Open again: a stream resuming from before the DRAFT spell is sent the market's state now, never
    // the DRAFT state or a trade made during it.
    await ingest([
      event('market.status', '2026-03-02T10:00:02Z', { marketId: 'ms-drafted', status: 'OPEN' }),
    ]);
    const again = await stream(account.key, 'ms-stays,ms-drafted', { 'last-event-id': resumeFrom });
    await again.until(() => named(again, 'market').some((e) => (e.data as MarketData).id === 'ms-drafted'));
    expect(named(again, 'trade')).toEqual([]);
    expect(named(again, 'market').map((e) => (e.data as MarketData).status)).not.toContain('DRAFT');
    await again.close();
  });
});

describe('bad input, answered before any charge', () => {
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['51 markets', Array.from({ length: 51 }, (_, i) => `m${i}`).join(','), {}, 400, 'VALIDATION_ERROR'],
    ['a malformed id', 'ms-a,not%20an%20id', {}, 400, 'VALIDATION_ERROR'],
    ['an empty entry', 'ms-a,,ms-b', {}, 400, 'VALIDATION_ERROR'],
    ['an unknown market', 'ms-a,nowhere', {}, 404, 'NOT_FOUND'],
    ['a malformed Last-Event-ID', 'ms-a', { 'last-event-id': 'yesterday' }, 400, 'VALIDATION_ERROR'],
    ['a price event id on the market stream', 'ms-a', { 'last-event-id': 'p.1.1' }, 400, 'VALIDATION_ERROR'],
    // 19 digits, as the pattern allows, past the largest id there can be (2^63 - 1).
    [
      'an event id past the largest',
      'ms-a',
      { 'last-event-id': 'm.9999999999999999999' },
      400,
      'VALIDATION_ERROR',
    ],
    ['2^63 as an event id', 'ms-a', { 'last-event-id': 'm.9223372036854775808' }, 400, 'VALIDATION_ERROR'],
    [
      'a snapshot id past the largest',
      'ms-a',
      { 'last-event-id': 'm.9999999999999999999.1' },
      400,
      'VALIDATION_ERROR',
    ],
  ];
  it.each(cases)('%s', async (_name, ids, headers, status, code) => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/stream/markets?ids=${ids}`,
      headers,
    });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ code });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('an event id past the largest is named in the 400; the largest itself resumes with a new snapshot', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/markets?ids=ms-a',
      headers: { 'last-event-id': 'm.9999999999999999999' },
    });
    expect(response.json()).toEqual({
      error: 'header.last-event-id: is not an event id: 9999999999999999999 is past 9223372036854775807',
      code: 'VALIDATION_ERROR',
      details: {
        problems: [
          {
            path: 'header.last-event-id',
            message: 'is not an event id: 9999999999999999999 is past 9223372036854775807',
          },
        ],
      },
      requestId: response.headers['x-request-id'],
    });
    const client = await stream(account.key, 'ms-a', { 'last-event-id': 'm.9223372036854775807' });
    expect(client.response.status).toBe(200);
    await client.until(() => named(client, 'market').length >= 1);
    expect(client.comments.join('\n')).toContain('is not an event of the last 24 hours: a new snapshot');
    await client.close();
  });

  it('a DRAFT market is as unknown as a market that does not exist', async () => {
    await ingest([
      marketCreated({ id: 'ms-draft' }),
      event('market.status', '2026-03-01T10:00:01Z', { marketId: 'ms-draft', status: 'DRAFT' }),
    ]);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/markets?ids=ms-draft',
    });
    expect(response.statusCode).toBe(404);
  });

  it('a key without the markets permission is refused', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', permissions: ['price'] });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/markets?ids=ms-a',
    });
    expect(response.statusCode).toBe(403);
  });
});

describe('metering and limits', () => {
  it('charges minutes as streamMarkets, and counts against the same limits as the price streams', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const opened = [await stream(account.key, 'ms-a'), await stream(account.key, 'ms-a')];
    const prices = await service.open('/stream/prices?symbols=SOL', account.key);
    expect(prices.response.status).toBe(200);
    const fourth = await ctx.request(account.key, { method: 'GET', url: '/api/v1/stream/markets?ids=ms-a' });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json()).toMatchObject({ code: 'STREAM_LIMIT_EXCEEDED', details: { limit: 'perKey' } });
    const rows = await ctx.database.db.query<{ operation: string }>(
      `SELECT operation FROM ledger_entries WHERE account_id = $1 AND kind = 'charge' ORDER BY operation`,
      [account.accountId],
    );
    expect(rows.map((r) => r.operation)).toEqual(['streamMarkets', 'streamMarkets', 'streamPrices']);
    for (const client of [...opened, prices]) await client.close();
  });

  it('stream events older than 24 hours are pruned by retention', async () => {
    const { marketsFeature } = await import('../../src/markets/feature.js');
    const table = ((await marketsFeature.retention?.()) ?? []).find((t) => t.name === 'market_stream_events');
    expect(table?.name).toBe('market_stream_events');
    expect(table?.keepMs({} as never)).toBe(24 * 3_600_000);
  });
});
