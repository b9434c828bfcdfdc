import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { event, marketCreated, ndjson, wallet } from '../markets/events.js';

/**
 * The market data the dashboard's markets page reads (docs/dashboard.md#market-data): the market
 * list, a market's detail (for its own address), history and trades, and the market stream, served to the session at
 * `/dashboard/api/{mode}` with the API's own answers and errors, and billed to the session's account
 * of that mode at the API's prices, without a key.
 */

let ctx: TestContext;
let alice: DashboardClient;
let key: string;
const streams: OpenEventStream[] = [];

let tradeCount = 0;
function trade(marketId: string, price: number, at: string) {
  tradeCount += 1;
  return event('trade', at, {
    marketId,
    tradeId: `dt-${tradeCount}`,
    outcome: 0,
    price,
    shares: '1000',
    buyer: wallet('buyer'),
    seller: wallet('seller'),
  });
}

async function ingest(events: Record<string, unknown>[]): Promise<void> {
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
}

/** The session's sandbox balance and ledger, read through the dashboard. */
async function sandboxLedger() {
  const overview = await alice.call('GET', '/dashboard/api/sandbox/overview');
  const ledger = await alice.call('GET', '/dashboard/api/sandbox/account/transactions?kind=charge');
  return {
    balance: (overview.body.account as { balanceUsd: string }).balanceUsd,
    charges: ledger.body.transactions as { operation: string; amountUsd: string; keyId: string | null }[],
  };
}

const without = (body: Record<string, unknown>, ...names: string[]) =>
  Object.fromEntries(Object.entries(body).filter(([name]) => !names.includes(name)));

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  alice = await DashboardClient.listening(ctx.app);
  await alice.signIn();
  key = (await ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' })).key;
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  await ingest([
    marketCreated({ id: 'dt-comet', title: 'Will the comet be visible' }, { at: at(600) }),
    marketCreated({ id: 'dt-rain', title: 'Rain in Lisbon' }, { at: at(600) }),
    trade('dt-comet', 4000, at(120)),
    trade('dt-comet', 4500, at(60)),
    trade('dt-comet', 5200, at(5)),
  ]);
});
afterAll(async () => {
  for (const stream of streams) await stream.close();
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

describe('the market twins', () => {
  it('answer what the API answers, each charged once to the session’s account at the API’s price, without a key', async () => {
    const before = await sandboxLedger();
    const reads = [
      '/markets?q=comet&sort=volume',
      '/markets/dt-comet',
      '/markets/dt-comet/history?interval=1h',
      '/markets/dt-comet/trades?limit=2',
    ];
    for (const path of reads) {
      const mine = await alice.call('GET', `/dashboard/api/sandbox${path}`);
      expect(mine.status, path).toBe(200);
      expect(mine.headers.get('cache-control')).toBe('no-store');
      const theirs = (await ctx.request(key, { method: 'GET', url: `/api/v1${path}` })).json();
      expect(without(mine.body, 'requestId', 'remainingBalanceUsd'), path).toEqual(
        without(theirs, 'requestId', 'remainingBalanceUsd'),
      );
    }
    const after = await sandboxLedger();
    const charged = after.charges.slice(0, after.charges.length - before.charges.length);
    expect(charged.map((c) => [c.operation, c.amountUsd, c.keyId]).sort()).toEqual([
      ['getMarket', '-0.02', null],
      ['getMarketHistory', '-0.05', null],
      ['listMarketTrades', '-0.02', null],
      ['listMarkets', '-0.05', null],
    ]);
    expect(Number(before.balance) - Number(after.balance)).toBeCloseTo(0.14, 6);
  });

  it('refuse bad input with the API’s errors, never charged', async () => {
    const before = await sandboxLedger();
    for (const path of [
      '/markets?sort=bogus',
      '/markets?q=%21%21%21',
      '/markets?cursor=abc&page=2',
      '/markets/dt-comet/history?interval=2m',
      '/markets/dt-comet/history?outcome=7',
      '/markets/dt-comet/trades?limit=101',
      '/markets/dt-comet/trades?cursor=tampered',
      '/markets/nope/trades',
      '/markets/nope',
      '/stream/markets?ids=',
      '/stream/markets?ids=nope',
    ]) {
      const mine = await alice.call('GET', `/dashboard/api/sandbox${path}`);
      const theirs = await ctx.request(key, { method: 'GET', url: `/api/v1${path}` });
      expect(`${path} ${mine.status}`).toBe(`${path} ${theirs.statusCode}`);
      expect(mine.status, path).toBeGreaterThanOrEqual(400);
      expect(mine.status, path).toBeLessThan(500);
      expect(without(mine.body, 'requestId'), path).toEqual(without(theirs.json(), 'requestId'));
    }
    expect(await sandboxLedger()).toEqual(before);
  });

  it('refuse an account that cannot pay with 402 INSUFFICIENT_BALANCE (the live account, never funded)', async () => {
    for (const path of [
      '/markets',
      '/markets/dt-comet',
      '/markets/dt-comet/trades',
      '/stream/markets?ids=dt-comet',
    ]) {
      const answer = await alice.call('GET', `/dashboard/api/live${path}`);
      expect(`${path} ${answer.status} ${answer.body.code}`).toBe(`${path} 402 INSUFFICIENT_BALANCE`);
    }
  });

  it('stream a market to the session: its snapshot, then a trade ingested meanwhile, a minute charged', async () => {
    const before = await sandboxLedger();
    const client = await openEventStream(`${alice.base}/dashboard/api/sandbox/stream/markets?ids=dt-comet`, {
      cookie: alice.cookie as string,
      'sec-fetch-site': 'same-origin',
    });
    streams.push(client);
    expect(client.response.status).toBe(200);
    expect(client.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await client.until(() => client.events.some((e) => e.event === 'market'));
    expect(client.events[0]).toMatchObject({ event: 'stream', data: { minuteUsd: '0.002' } });
    expect(client.events[1]).toMatchObject({
      event: 'market',
      data: { id: 'dt-comet', outcomes: [{ index: 0, lastPrice: 5200 }, { index: 1 }] },
    });
    await ingest([trade('dt-comet', 6100, new Date().toISOString())]);
    await client.until(() => client.events.some((e) => e.event === 'trade'));
    expect(client.events.find((e) => e.event === 'trade')?.data).toMatchObject({
      marketId: 'dt-comet',
      outcome: 0,
      price: 6100,
    });
    await client.until(() =>
      client.events.some(
        (e) =>
          e.event === 'market' &&
          (e.data as { outcomes: { lastPrice: number }[] }).outcomes[0]?.lastPrice === 6100,
      ),
    );
    // The first minute is charged at connect, coalesced: it reaches the ledger within a second.
    let after = await sandboxLedger();
    while (after.charges.length === before.charges.length) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await sandboxLedger();
    }
    expect(after.charges[0]).toMatchObject({ operation: 'streamMarkets', amountUsd: '-0.002', keyId: null });
    // A session counts as a key against the stream limits: a fourth stream is refused.
    for (let i = 0; i < 2; i += 1) {
      const more = await openEventStream(`${alice.base}/dashboard/api/sandbox/stream/markets?ids=dt-rain`, {
        cookie: alice.cookie as string,
        'sec-fetch-site': 'same-origin',
      });
      streams.push(more);
      expect(more.response.status).toBe(200);
    }
    const fourth = await alice.call('GET', '/dashboard/api/sandbox/stream/markets?ids=dt-rain');
    expect(`${fourth.status} ${fourth.body.code}`).toBe('429 STREAM_LIMIT_EXCEEDED');
    expect((fourth.body.details as { limit: string }).limit).toBe('perKey');
  });
});
