import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const ingest = (text: string) => ingestText(database.db, text);

async function counts(marketId: string) {
  const [row] = await database.db.query<Record<string, bigint>>(
    `SELECT (SELECT count(*) FROM market_orders WHERE market_id = $1) AS orders,
            (SELECT count(*) FROM market_trades WHERE market_id = $1) AS trades,
            (SELECT count(*) FROM market_positions WHERE market_id = $1) AS positions,
            (SELECT count(*) FROM market_stakes WHERE market_id = $1) AS stakes,
            (SELECT count(*) FROM market_events) AS events`,
    [marketId],
  );
  return row;
}

async function status(marketId: string) {
  const [row] = await database.db.query<{ status: string; details: unknown }>(
    'SELECT status, resolution_details AS details FROM markets WHERE id = $1',
    [marketId],
  );
  return row;
}

describe('idempotency', () => {
  const file = ndjson([
    marketCreated({ id: 'idem' }, { id: 'idem-1' }),
    event('order.placed', '2026-03-01T11:00:00Z', {
      marketId: 'idem',
      orderId: 'idem-o1',
      wallet: wallet('a'),
      outcome: 0,
      side: 'bid',
      price: 4000,
      shares: '1000',
    }),
    event('trade', '2026-03-01T12:00:00Z', {
      marketId: 'idem',
      tradeId: 'idem-t1',
      outcome: 0,
      price: 4000,
      shares: '10',
      buyer: wallet('a'),
      seller: wallet('b'),
    }),
    event('stake', '2026-03-01T12:00:00Z', { marketId: 'idem', wallet: wallet('c'), amount: '5' }),
  ]);

  it('applies a file once; the same file again is skipped line by line and changes nothing', async () => {
    expect(await ingest(file)).toEqual({
      received: 4,
      applied: 4,
      skipped: 0,
      refused: 0,
      reports: [],
      reportsTruncated: false,
    });
    const before = await counts('idem');
    const again = await ingest(file);
    expect(again).toMatchObject({ received: 4, applied: 0, skipped: 4, refused: 0 });
    expect(again.reports.map((r) => [r.line, r.outcome, r.reason])).toEqual([
      [1, 'skipped', 'duplicate'],
      [2, 'skipped', 'duplicate'],
      [3, 'skipped', 'duplicate'],
      [4, 'skipped', 'duplicate'],
    ]);
    expect(await counts('idem')).toEqual(before);
  });

  it('refuses the same id with a different body (key order and spacing do not count)', async () => {
    '{ "at": "2026-03-01T10:00:00Z", "type": "market.created", "id": "idem-1", "sandbox": true, "market": {}}';
    const changed = ndjson([marketCreated({ id: 'idem', title: 'Another title' }, { id: 'idem-1' })]);
    const report = await ingest(changed);
    expect(report).toMatchObject({ applied: 0, skipped: 0, refused: 1 });
    expect(report.reports).toEqual([
      {
        line: 1,
        eventId: 'idem-1',
        outcome: 'refused',
        reason: 'conflict',
        message: 'event id idem-1 was ingested before with a different body',
      },
    ]);
    // The same fields in another order and spacing are the same body.
    const first = JSON.parse(file.split('\n')[0] as string) as Record<string, unknown>;
    const same = JSON.stringify(Object.fromEntries(Object.entries(first).reverse()), null, 2).replace(
      /\n/g,
      ' ',
    );
    expect(await ingest(same)).toMatchObject({ skipped: 1, refused: 0 });
    const [row] = await database.db.query<{ title: string }>('SELECT title FROM markets WHERE id = $1', [
      'idem',
    ]);
    expect(row?.title).toBe('Market idem');
  });

  it('within one file: a repeated line is skipped, a different body under the same id refused', async () => {
    const e = event(
      'stake',
      '2026-03-02T00:00:00Z',
      { marketId: 'idem', wallet: wallet('d'), amount: '7' },
      'dup-1',
    );
    const other = { ...e, amount: '8' };
    const report = await ingest(ndjson([e, e, other]));
    expect(report).toMatchObject({ received: 3, applied: 1, skipped: 1, refused: 1 });
    expect(report.reports.map((r) => [r.line, r.reason, r.message])).toEqual([
      [2, 'duplicate', 'event dup-1 was ingested on line 1'],
      [3, 'conflict', 'event id dup-1 was ingested on line 1 with a different body'],
    ]);
  });

  it('within one file: a repeat of a line that is refused is refused too', async () => {
    const orphan = event('stake', '2026-03-02T00:00:00Z', {
      marketId: 'nowhere',
      wallet: wallet('d'),
      amount: '7',
    });
    const report = await ingest(ndjson([orphan, orphan]));
    expect(report).toMatchObject({ received: 2, applied: 0, skipped: 0, refused: 2 });
    expect(report.reports.map((r) => [r.line, r.reason, r.message])).toEqual([
      [1, 'unknown_market', 'market nowhere is not known (send its market.created first)'],
      [2, 'unknown_market', 'as line 1: market nowhere is not known (send its market.created first)'],
    ]);
  });

  it('stores each body’s hash as the SHA-256 of its JSON with keys sorted at every depth, whatever the type', async () => {
    // The form events recorded by earlier versions were hashed in: a redelivery of one of them is
    // recognised as a duplicate only while it stays the same. Computed here independently.
    /** `value` with the keys of every object in the order `order` puts them in. */
    const rekeyed = (value: unknown, order: (keys: string[]) => string[]): unknown =>
      Array.isArray(value)
        ? value.map((item) => rekeyed(item, order))
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              order(Object.keys(value)).map((k) => [
                k,
                rekeyed((value as Record<string, unknown>)[k], order),
              ]),
            )
          : value;
    const expected = (e: Event) =>
      createHash('sha256')
        .update(JSON.stringify(rekeyed(e, (keys) => keys.sort())))
        .digest('hex');
    const feed = { type: 'PRICE_FEED', symbol: 'SOL', condition: 'above', targetPrice: 123.45, tolerance: 0 };
    const events: Event[] = [
      marketCreated({ id: 'hash-a', resolution: feed, outcomes: ['Yes', 'No'], imageUrl: null }),
      marketCreated(
        {
          id: 'hash-b',
          marketType: 'CATEGORICAL',
          outcomes: ['Ünïcode "quoted"', 'b\\c', '😀'],
          description: 'line one\nline "two"\ttab',
        },
        { sandbox: false },
      ),
      event('market.status', '2026-03-02T00:00:00Z', { marketId: 'hash-a', status: 'CLOSED' }),
      event('order.placed', '2026-03-01T11:00:00.5+02:00', {
        marketId: 'hash-a',
        orderId: 'hash-o1',
        wallet: wallet('a'),
        outcome: 1,
        side: 'ask',
        price: 0,
        shares: '9223372036854775807',
      }),
      event('order.filled', '2026-03-01T11:30:00Z', { orderId: 'hash-o1', shares: '1' }),
      event('order.cancelled', '2026-03-01T11:40:00Z', { orderId: 'hash-o1' }),
      event('trade', '2026-03-01T12:00:00.123Z', {
        seller: wallet('b'),
        buyer: wallet('a'),
        shares: '10',
        price: 10_000,
        outcome: 0,
        tradeId: 'hash-t1',
        marketId: 'hash-a',
      }),
      event('position', '2026-03-01T12:00:00Z', {
        marketId: 'hash-a',
        wallet: wallet('a'),
        outcome: 0,
        shares: '10',
        wagered: '0',
      }),
      event('stake', '2026-03-01T12:00:00Z', {
        marketId: 'hash-a',
        wallet: wallet('c'),
        username: null,
        amount: '5',
      }),
      event('market.resolved', '2026-03-03T00:00:00Z', {
        marketId: 'hash-b',
        winningOutcomeIndex: 2,
        details: { z: [{ y: 1, x: [2, { w: null, v: 'é' }] }], a: { c: true, b: -1.5e-7 } },
      }),
      event('market.resolved', '2026-03-03T00:00:00Z', {
        marketId: 'hash-a',
        winningOutcomeIndex: 0,
        details: null,
      }),
    ];
    const report = await ingest(ndjson(events));
    expect(report.reports).toEqual([]);
    const rows = await database.db.query<{ id: string; sha: string }>(
      `SELECT id, encode(body_sha256, 'hex') AS sha FROM market_events WHERE id = ANY($1::text[])`,
      [events.map((e) => e.id)],
    );
    expect(new Map(rows.map((r) => [r.id, r.sha]))).toEqual(new Map(events.map((e) => [e.id, expected(e)])));
    // Keys in another order at every depth are the same body: each line again is a duplicate.
    const again = await ingest(ndjson(events.map((e) => rekeyed(e, (keys) => keys.reverse()) as Event)));
    expect(again).toMatchObject({ received: events.length, applied: 0, skipped: events.length });
  });

  it('refuses an `at` or a `closesAt` outside the years 0001–9999 in UTC as a bad line, the others applied', async () => {
    const report = await ingest(
      ndjson([
        event('stake', '0000-06-01T00:00:00.000Z', { marketId: 'idem', wallet: wallet('y0'), amount: '1' }),
        event('stake', '9999-12-31T23:00:00-05:00', { marketId: 'idem', wallet: wallet('y1'), amount: '1' }),
        marketCreated({ id: 'year-0', closesAt: '0000-01-01T00:00:00Z' }),
        event('stake', '0001-01-01T00:00:00Z', { marketId: 'idem', wallet: wallet('y2'), amount: '1' }),
      ]),
    );
    expect(report).toMatchObject({ received: 4, applied: 1, refused: 3 });
    expect(report.reports.map((r) => [r.line, r.reason, r.problems?.[0]?.path])).toEqual([
      [1, 'invalid', 'event.at'],
      [2, 'invalid', 'event.at'],
      [3, 'invalid', 'event.market.closesAt'],
    ]);
  });

  it('records a trade before 1970 at its instant, fractions of a second included', async () => {
    const at = '1969-12-31T23:59:59.500Z';
    const trade = event('trade', at, {
      marketId: 'idem',
      tradeId: 'idem-1969',
      outcome: 0,
      price: 100,
      shares: '1',
      buyer: wallet('a'),
      seller: wallet('b'),
    });
    expect(await ingest(ndjson([trade]))).toMatchObject({ applied: 1, refused: 0 });
    const [row] = await database.db.query<{ at: Date }>('SELECT at FROM market_trades WHERE trade_id = $1', [
      'idem-1969',
    ]);
    expect(row?.at.toISOString()).toBe(at);
  });

  it('stores a price feed’s listed symbol in its canonical form', async () => {
    const feed = { type: 'PRICE_FEED', symbol: 'sol', condition: 'below', targetPrice: 120, tolerance: 0.5 };
    await ingest(ndjson([marketCreated({ id: 'feed-lower', resolution: feed })]));
    const [row] = await database.db.query<{ price_symbol: string }>(
      'SELECT price_symbol FROM markets WHERE id = $1',
      ['feed-lower'],
    );
    expect(row?.price_symbol).toBe('SOL');
  });

  it('applies each event once when the same file is ingested concurrently', async () => {
    const events = [marketCreated({ id: 'race' })];
    for (let i = 0; i < 200; i++) {
      events.push(
        event('trade', '2026-03-01T12:00:00Z', {
          marketId: 'race',
          tradeId: `race-t${i}`,
          outcome: i % 2,
          price: 5000,
          shares: '1',
          buyer: wallet(`b${i}`),
          seller: wallet('s'),
        }),
      );
    }
    const text = ndjson(events);
    const reports = await Promise.all([ingest(text), ingest(text), ingest(text)]);
    expect(reports.reduce((n, r) => n + r.applied, 0)).toBe(201);
    expect(reports.reduce((n, r) => n + r.skipped, 0)).toBe(402);
    expect(reports.every((r) => r.refused === 0)).toBe(true);
    expect((await counts('race'))?.trades).toBe(200n);
  });
});

describe('out-of-order events', () => {
  it('applies a market’s events that come before its creation in the file, and a fill before its order', async () => {
    const report = await ingest(
      ndjson([
        event('order.filled', '2026-03-01T12:00:00Z', { orderId: 'ooo-o1', shares: '300' }),
        event('order.placed', '2026-03-01T11:00:00Z', {
          marketId: 'ooo',
          orderId: 'ooo-o1',
          wallet: wallet('a'),
          outcome: 1,
          side: 'ask',
          price: 6000,
          shares: '1000',
        }),
        event('market.status', '2026-03-05T00:00:00Z', { marketId: 'ooo', status: 'CLOSED' }),
        marketCreated({ id: 'ooo' }),
      ]),
    );
    expect(report).toMatchObject({ applied: 4, refused: 0 });
    const [order] = await database.db.query<{ open_shares: bigint; state: string }>(
      'SELECT open_shares, state FROM market_orders WHERE order_id = $1',
      ['ooo-o1'],
    );
    expect(order).toEqual({ open_shares: 300n, state: 'open' });
    expect((await status('ooo'))?.status).toBe('CLOSED');
  });

  it('keeps the newest state by `at` whatever the arrival order, across files', async () => {
    await ingest(
      ndjson([
        event('market.status', '2026-03-09T00:00:00Z', { marketId: 'ooo', status: 'RESOLVING' }),
        event('order.filled', '2026-03-01T14:00:00Z', { orderId: 'ooo-o1' }),
        event('position', '2026-03-02T00:00:00Z', {
          marketId: 'ooo',
          wallet: wallet('p'),
          outcome: 0,
          shares: '0',
          wagered: '0',
        }),
        event('stake', '2026-03-02T00:00:00Z', { marketId: 'ooo', wallet: wallet('c'), amount: '0' }),
      ]),
    );
    // Older news arrives later: none of it may undo what is newer.
    const late = await ingest(
      ndjson([
        event('market.status', '2026-03-06T00:00:00Z', { marketId: 'ooo', status: 'OPEN' }),
        event('order.filled', '2026-03-01T13:00:00Z', { orderId: 'ooo-o1', shares: '100' }),
        event('position', '2026-03-01T00:00:00Z', {
          marketId: 'ooo',
          wallet: wallet('p'),
          outcome: 0,
          shares: '50',
          wagered: '20',
        }),
        event('stake', '2026-03-01T00:00:00Z', { marketId: 'ooo', wallet: wallet('c'), amount: '900' }),
      ]),
    );
    expect(late).toMatchObject({ applied: 4, refused: 0 });
    const market = await status('ooo');
    expect(market?.status).toBe('RESOLVING');
    expect((market?.details as { transitions: unknown[] } | undefined)?.transitions).toEqual([
      expect.objectContaining({ from: 'OPEN', to: 'CLOSED', at: '2026-03-05T00:00:00.000Z' }),
      expect.objectContaining({ from: 'CLOSED', to: 'RESOLVING', at: '2026-03-09T00:00:00.000Z' }),
    ]);
    const [row] = await database.db.query<Record<string, unknown>>(
      `SELECT o.open_shares, o.state, p.shares AS position, s.amount AS stake
         FROM market_orders o, market_positions p, market_stakes s
        WHERE o.order_id = 'ooo-o1' AND p.market_id = 'ooo' AND s.market_id = 'ooo'`,
    );
    expect(row).toEqual({ open_shares: 0n, state: 'filled', position: 0n, stake: 0n });
  });

  it('breaks a tie in `at` by the larger event id, in any arrival order', async () => {
    const at = '2026-03-10T00:00:00Z';
    const a = event('market.status', at, { marketId: 'ooo', status: 'CANCELLED' }, 'tie-a');
    const b = event('market.status', at, { marketId: 'ooo', status: 'FINALIZED' }, 'tie-b');
    await ingest(ndjson([b]));
    await ingest(ndjson([a]));
    expect((await status('ooo'))?.status).toBe('FINALIZED');
  });

  it('refuses events of an unknown market without recording them, so they can be sent again', async () => {
    const trade = event('trade', '2026-03-01T12:00:00Z', {
      marketId: 'later',
      tradeId: 'later-t1',
      outcome: 0,
      price: 5000,
      shares: '4',
      buyer: wallet('a'),
      seller: wallet('b'),
    });
    const fill = event('order.cancelled', '2026-03-01T12:00:00Z', { orderId: 'no-such-order' });
    const first = await ingest(ndjson([trade, fill]));
    expect(first.reports).toEqual([
      {
        line: 1,
        eventId: trade.id,
        outcome: 'refused',
        reason: 'unknown_market',
        message: 'market later is not known (send its market.created first)',
      },
      {
        line: 2,
        eventId: fill.id,
        outcome: 'refused',
        reason: 'unknown_order',
        message: 'order no-such-order is not known (send its order.placed first)',
      },
    ]);
    await ingest(ndjson([marketCreated({ id: 'later' })]));
    expect(await ingest(ndjson([trade]))).toMatchObject({ applied: 1, refused: 0 });
  });
});

describe('a file with bad lines', () => {
  it('applies the good lines and reports each bad one by number, with its problems', async () => {
    const good = marketCreated({ id: 'mixed' });
    const lines = [
      JSON.stringify(good),
      '{"id": "x1", "type": "trade", "at": ',
      '',
      JSON.stringify({ id: 'x2', type: 'market.exploded', at: '2026-03-01T00:00:00Z' }),
      JSON.stringify(
        event('stake', 'yesterday', { marketId: 'mixed', wallet: 'not-a-wallet', amount: '-5' }, 'x3'),
      ),
      JSON.stringify(
        event(
          'position',
          '2026-03-01T00:00:00Z',
          {
            marketId: 'mixed',
            wallet: wallet('p'),
            outcome: 0,
            shares: '9999999999999999999',
            wagered: '1',
          },
          'x4',
        ),
      ),
      '{"id":"x5","type":"stake","at":"2026-03-01T00:00:00Z","marketId":"mixed","wallet":"WALLET","amount":"1\\u0000"}',
      JSON.stringify(
        event(
          'trade',
          '2026-03-01T00:00:00Z',
          {
            marketId: 'mixed',
            tradeId: 'x6',
            outcome: 7,
            price: 5000,
            shares: '1',
            buyer: wallet('a'),
            seller: wallet('b'),
          },
          'x6',
        ),
      ),
      JSON.stringify(
        marketCreated(
          { id: 'bad-binary', outcomes: ['a', 'b', 'c'], resolution: { type: 'PRICE_FEED', symbol: 'SOL' } },
          { id: 'x7' },
        ),
      ),
      JSON.stringify(
        event(
          'stake',
          '2026-03-01T00:00:00Z',
          { marketId: 'mixed', wallet: wallet('c'), amount: '25', extra: 1 },
          'x8',
        ),
      ),
      JSON.stringify(
        event('stake', '2026-03-01T00:00:00Z', { marketId: 'mixed', wallet: wallet('c'), amount: '25' }),
      ),
    ];
    const report = await ingest(lines.join('\n'));
    expect(report).toMatchObject({
      received: 10,
      applied: 2,
      skipped: 0,
      refused: 8,
      reportsTruncated: false,
    });
    const byLine = Object.fromEntries(report.reports.map((r) => [r.line, r]));
    expect(Object.keys(byLine).map(Number)).toEqual([2, 4, 5, 6, 7, 8, 9, 10]);
    expect(byLine[2]).toMatchObject({ eventId: null, reason: 'invalid', message: 'event is not valid JSON' });
    expect(byLine[4]).toMatchObject({ eventId: 'x2', reason: 'invalid' });
    expect(byLine[4]?.message).toContain('event.type must be one of: market.created');
    expect(byLine[5]?.problems?.map((p) => p.path).sort()).toEqual(['event.amount', 'event.wallet']);
    expect(byLine[6]?.problems).toEqual([
      { path: 'event.shares', message: 'must be at most 9223372036854775807' },
    ]);
    expect(byLine[7]).toMatchObject({
      eventId: 'x5',
      problems: [{ path: 'event', message: 'contains a NUL character' }],
    });
    expect(byLine[8]).toMatchObject({
      eventId: 'x6',
      reason: 'invalid',
      message: 'outcome 7 is out of range: market mixed has 2',
    });
    expect(byLine[9]?.problems?.map((p) => p.path).sort()).toEqual([
      'event.market.outcomes',
      'event.market.resolution.condition',
      'event.market.resolution.targetPrice',
      'event.market.resolution.tolerance',
    ]);
    expect(byLine[10]?.problems).toEqual([{ path: 'event.extra', message: 'is not a known field' }]);
    // Nothing of a refused line was written, and its id stays free.
    const [row] = await database.db.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM market_events WHERE id IN ('x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8')`,
    );
    expect(row?.n).toBe(0n);
    expect(await counts('mixed')).toMatchObject({ trades: 0n, positions: 0n, stakes: 1n });
    const [market] = await database.db.query('SELECT id FROM markets WHERE id = $1', ['bad-binary']);
    expect(market).toBeUndefined();
  });
});
