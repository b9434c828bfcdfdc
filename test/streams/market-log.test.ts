import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type Event, event, marketCreated, ndjson, wallet } from '../markets/events.js';

/**
 * The market stream's writer (docs/streams.md#markets) as it stores a chunk: each `trade` event's
 * data text exactly as it is sent (a stream adds only its `requestId`), a market's trades in the
 * order of their `at` to the millisecond, then trade id, in one row (migration 0042), the markets
 * in the order of their first trade; then each changed market's `market` event, and `resolved`
 * once, when the market has just been resolved.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

async function ingest(events: Event[]): Promise<void> {
  const report = await ingestText(database.db, ndjson(events));
  expect(report).toMatchObject({ refused: 0 });
}

/** The rows written since `after`, in id (commit) order. */
function rowsAfter(after: string) {
  return database.db.query<{ id: string; kind: string; market_id: string; events: number; data: string }>(
    `SELECT id::text, kind, market_id, events, data FROM market_stream_events WHERE id > $1::bigint
      ORDER BY market_stream_events.id`,
    [after],
  );
}

/** The events written since `after`, in id order: each row's lines, its id the last one's. */
async function eventsAfter(after: string) {
  return (await rowsAfter(after)).flatMap((row) => {
    const lines = row.data.split('\n');
    expect(lines).toHaveLength(row.events);
    return lines.map((data, k) => ({
      id: (BigInt(row.id) - BigInt(row.events - 1 - k)).toString(),
      kind: row.kind,
      market_id: row.market_id,
      data,
    }));
  });
}

async function newest(): Promise<string> {
  const [row] = await database.db.query<{ id: string }>(
    'SELECT COALESCE(max(id), 0)::text AS id FROM market_stream_events',
  );
  return row?.id ?? '0';
}

const trade = (marketId: string, tradeId: string, at: string, fields: Record<string, unknown> = {}) =>
  event('trade', at, {
    marketId,
    tradeId,
    outcome: 0,
    price: 5000,
    shares: '1000',
    buyer: wallet('buyer'),
    seller: wallet('seller'),
    ...fields,
  });

describe('the market stream writer', () => {
  it("writes a chunk's trades as a row per market, each in (at to the millisecond, trade id) order, their data exactly", async () => {
    await ingest([marketCreated({ id: 'ml-a' }), marketCreated({ id: 'ml-b' })]);
    const before = await newest();
    await ingest([
      trade('ml-b', 'ml-late"quoted', '2026-03-02T10:00:05.5Z', { price: 4100, shares: '7' }),
      // The same millisecond as ml-b's ml-1, 998 µs earlier: to the millisecond the two are equal.
      trade('ml-a', 'ml-2', '2026-03-02T12:00:00.123001+02:00', { price: 6000 }),
      trade('ml-b', 'ml-1', '2026-03-02T10:00:00.123999Z', { price: 4000, shares: '123456789012345678' }),
      trade('ml-a', 'ml\\back', '2026-03-02T09:59:59Z', { price: 6100, outcome: 1 }),
    ]);
    expect((await rowsAfter(before)).map((r) => [r.kind, r.market_id, r.events])).toEqual([
      ['trade', 'ml-a', 2],
      ['trade', 'ml-b', 2],
      ['market', 'ml-a', 1],
      ['market', 'ml-b', 1],
    ]);
    const written = await eventsAfter(before);
    expect(written.map((e) => [e.kind, e.market_id])).toEqual([
      ['trade', 'ml-a'],
      ['trade', 'ml-a'],
      ['trade', 'ml-b'],
      ['trade', 'ml-b'],
      ['market', 'ml-a'],
      ['market', 'ml-b'],
    ]);
    expect(written.slice(0, 4).map((e) => e.data)).toEqual([
      String.raw`{"marketId":"ml-a","tradeId":"ml\\back","outcome":1,"price":6100,"shares":"1000","at":"2026-03-02T09:59:59.000Z"}`,
      '{"marketId":"ml-a","tradeId":"ml-2","outcome":0,"price":6000,"shares":"1000","at":"2026-03-02T10:00:00.123Z"}',
      '{"marketId":"ml-b","tradeId":"ml-1","outcome":0,"price":4000,"shares":"123456789012345678","at":"2026-03-02T10:00:00.123Z"}',
      String.raw`{"marketId":"ml-b","tradeId":"ml-late\"quoted","outcome":0,"price":4100,"shares":"7","at":"2026-03-02T10:00:05.500Z"}`,
    ]);
    expect(JSON.parse(written[4]?.data ?? '')).toMatchObject({
      id: 'ml-a',
      tradingStats: { totalTrades: 2 },
      outcomes: [{ lastPrice: 6000 }, { lastPrice: 6100 }],
    });
    const ids = written.map((e) => BigInt(e.id));
    expect(ids).toEqual(ids.map((_, i) => (ids[0] ?? 0n) + BigInt(i)));

    // A later chunk with a trade older than all of them: the events still follow in commit order.
    const next = await newest();
    await ingest([trade('ml-a', 'ml-older', '2026-03-01T23:00:00Z', { price: 5500 })]);
    const later = await eventsAfter(next);
    expect(later.map((e) => [e.kind, e.market_id])).toEqual([
      ['trade', 'ml-a'],
      ['market', 'ml-a'],
    ]);
    expect(BigInt(later[0]?.id ?? '0')).toBe(BigInt(next) + 1n);
    // Its last price is still the newest trade's (by `at`), its trade count one more.
    expect(JSON.parse(later[1]?.data ?? '')).toMatchObject({
      tradingStats: { totalTrades: 3 },
      outcomes: [{ lastPrice: 6000 }, { lastPrice: 6100 }],
    });
  });

  it('sends `resolved` once: a trade of a resolved market later sends its state, not the resolution again', async () => {
    await ingest([marketCreated({ id: 'ml-r' })]);
    const before = await newest();
    await ingest([
      trade('ml-r', 'ml-r-1', '2026-03-02T10:00:00Z'),
      event('market.resolved', '2026-03-02T12:00:00Z', { marketId: 'ml-r', winningOutcomeIndex: 0 }),
    ]);
    const resolving = await eventsAfter(before);
    expect(resolving.map((e) => e.kind)).toEqual(['trade', 'market', 'resolved']);
    const next = await newest();
    await ingest([trade('ml-r', 'ml-r-2', '2026-03-02T11:00:00Z')]);
    const after = await eventsAfter(next);
    expect(after.map((e) => e.kind)).toEqual(['trade', 'market']);
    expect(JSON.parse(after[1]?.data ?? '')).toMatchObject({
      status: 'FINALIZED',
      tradingStats: { totalTrades: 2 },
    });
  });

  it('an event that changes no state sends nothing; a status change of an untraded market sends its state', async () => {
    await ingest([marketCreated({ id: 'ml-q' })]);
    const before = await newest();
    await ingest([
      event('position', '2026-03-02T10:01:00Z', {
        marketId: 'ml-q',
        wallet: wallet('holder'),
        outcome: 0,
        shares: '10',
        wagered: '100',
      }),
    ]);
    expect(await eventsAfter(before)).toEqual([]);
    await ingest([event('market.status', '2026-03-02T11:00:00Z', { marketId: 'ml-q', status: 'CLOSED' })]);
    const closed = await eventsAfter(before);
    expect(closed.map((e) => e.kind)).toEqual(['market']);
    expect(JSON.parse(closed[0]?.data ?? '')).toMatchObject({ status: 'CLOSED' });
  });
});
