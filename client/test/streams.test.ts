import { type AddressInfo, createServer, type Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import type { TestContext } from '../../test/helpers/context.js';
import { countEntries } from '../../test/helpers/ledger.js';
import { event, marketCreated, ndjson, wallet } from '../../test/markets/events.js';
import { createSibylClient, SibylApiError, type StreamMessage } from '../src/index.js';
import { recordingSleep, startService } from './helpers.js';

// streamPrices / streamMarkets against the real service, through a relay that can cut every open
// connection (as a proxy or a network would): the iterators reconnect with Last-Event-ID and back
// off, and stop on what reconnecting cannot mend. Waits are recorded, never slept.

let ctx: TestContext;
let baseUrl: string;
const relays: Relay[] = [];

beforeAll(async () => {
  ({ ctx, baseUrl } = await startService());
});
afterAll(async () => {
  for (const relay of relays) await relay.close();
  await ctx.close();
});

interface Relay {
  url: string;
  /** Each connection's request head, in order. */
  heads: string[];
  /** Cuts every open connection. */
  cut(): void;
  /** Refuses the next `n` connections (closed at once). */
  refuse(n: number): void;
  close(): Promise<void>;
}

async function startRelay(target: string): Promise<Relay> {
  const upstream = new URL(target);
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  let refusing = 0;
  const server: Server = createServer((client) => {
    client.on('error', () => {});
    if (refusing > 0) {
      refusing -= 1;
      client.destroy();
      return;
    }
    const index = heads.length;
    heads.push('');
    const service = new Socket();
    service.on('error', () => client.destroy());
    sockets.add(client).add(service);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(service);
      client.destroy();
      service.destroy();
    };
    client.on('close', forget);
    service.on('close', forget);
    service.connect(Number(upstream.port), upstream.hostname, () => {
      client.on('data', (chunk: Buffer) => {
        heads[index] += chunk.toString();
        service.write(chunk);
      });
      service.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relay: Relay = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    heads,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    refuse: (n) => {
      refusing = n;
    },
    close: async () => {
      relay.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  relays.push(relay);
  return relay;
}

async function next<T extends StreamMessage>(it: AsyncGenerator<T>, want: (m: T) => boolean): Promise<T> {
  for (;;) {
    const { value, done } = await it.next();
    if (done) throw new Error('the stream ended');
    if (want(value)) return value;
  }
}

const lastEventIdOf = (head: string) => /last-event-id: ([^\r\n]+)/i.exec(head)?.[1];

describe('streamPrices', () => {
  it('reconnects after a cut with Last-Event-ID, and goes on', async () => {
    const relay = await startRelay(baseUrl);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const { sleep, waits } = recordingSleep();
    const reasons: string[] = [];
    const sibyl = createSibylClient({ baseUrl: relay.url, apiKey: account.key, sleep, random: () => 0 });
    const prices = sibyl.streamPrices(['SOL', 'JUP'], {
      onReconnect: ({ reason }) => reasons.push(reason),
    });
    const announce = await next(prices, () => true);
    expect(announce).toMatchObject({ event: 'stream', data: { minuteUsd: '0.002' } });
    await next(prices, (m) => m.event === 'price');
    const last = await next(prices, (m) => m.event === 'price');
    expect(last.data).toMatchObject({ symbol: 'JUP' });
    relay.cut();
    const again = await next(prices, (m) => m.event === 'price');
    expect(again.data).toMatchObject({ symbol: 'SOL' });
    expect(relay.heads).toHaveLength(2);
    expect(lastEventIdOf(relay.heads[1] ?? '')).toBe(last.id);
    // One reconnection, after the first (jittered) wait.
    expect(reasons).toHaveLength(1); // the reading failed (undici: "terminated")
    expect(waits).toEqual([500]);
    await prices.return(undefined);
  });

  it('backs off exponentially, capped, while the service cannot be reached', async () => {
    const relay = await startRelay(baseUrl);
    relay.refuse(4);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const { sleep, waits } = recordingSleep();
    const sibyl = createSibylClient({ baseUrl: relay.url, apiKey: account.key, sleep, random: () => 0.5 });
    const prices = sibyl.streamPrices(['SOL'], { reconnectDelayMs: 1000, maxReconnectDelayMs: 4000 });
    await next(prices, (m) => m.event === 'price');
    // 1000, 2000, 4000, 4000 (the cap), each × (0.5 + 0.5 × 0.5).
    expect(waits).toEqual([750, 1500, 3000, 3000]);
    await prices.return(undefined);
  });

  it('stops on a refusal reconnecting cannot mend: 402 INSUFFICIENT_BALANCE, 404 SYMBOL_NOT_FOUND', async () => {
    const poor = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.001' });
    const { sleep, waits } = recordingSleep();
    const sibyl = createSibylClient({ baseUrl, apiKey: poor.key, sleep });
    await expect(next(sibyl.streamPrices(['SOL']), () => true)).rejects.toMatchObject({
      name: 'SibylApiError',
      status: 402,
      code: 'INSUFFICIENT_BALANCE',
    });
    const rich = await ctx.createAccount({ mode: 'sandbox' });
    const other = createSibylClient({ baseUrl, apiKey: rich.key, sleep });
    const error = await next(other.streamPrices(['SOL', 'NOPE']), () => true).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SibylApiError);
    expect(error).toMatchObject({ status: 404, code: 'SYMBOL_NOT_FOUND' });
    expect(waits).toEqual([]);
    expect(await countEntries(ctx.database.db, rich.accountId, 'charge')).toBe(0);
  });
});

describe('streamMarkets', () => {
  it('after a cut, resumes with the events it missed', async () => {
    const created = await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'client-m' })]));
    expect(created).toMatchObject({ refused: 0 });
    const relay = await startRelay(baseUrl);
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const { sleep } = recordingSleep();
    const sibyl = createSibylClient({ baseUrl: relay.url, apiKey: account.key, sleep });
    const markets = sibyl.streamMarkets(['client-m']);
    const snapshot = await next(markets, (m) => m.event === 'market');
    expect(snapshot.data).toMatchObject({ id: 'client-m', status: 'OPEN' });
    relay.cut();
    // Missed while cut: a trade.
    const trade = event('trade', '2026-03-06T10:00:00Z', {
      marketId: 'client-m',
      tradeId: 'client-t1',
      outcome: 0,
      price: 6500,
      shares: '100',
      buyer: wallet('buyer'),
      seller: wallet('seller'),
    });
    expect(await ingestText(ctx.database.db, ndjson([trade]))).toMatchObject({ refused: 0 });
    const missed = await next(markets, (m) => m.event === 'trade');
    expect(missed.data).toMatchObject({ marketId: 'client-m', tradeId: 'client-t1', price: 6500 });
    expect(lastEventIdOf(relay.heads[1] ?? '')).toBe(snapshot.id);
    await markets.return(undefined);
  });
});
