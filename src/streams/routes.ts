import type { FastifyInstance } from 'fastify';
import type { BaseDeps } from '../feature.js';
import type { MeterMinutes } from '../http/event-stream/stream.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import { defineRoute } from '../http/route.js';
import { formatUsd } from '../lib/money.js';
import { MAX_BATCH_SYMBOLS, type PriceService } from '../prices/index.js';
import type { LiveStreamSettings } from './config.js';
import { MarketFeed, readResume } from './market-feed.js';
import { streamedMarkets } from './market-ids.js';
import { PriceFeed } from './price-feed.js';
import {
  MAX_STREAM_MARKETS,
  MarketStreamEvent,
  MarketStreamHeaders,
  PriceStreamEvent,
  PriceStreamHeaders,
  StreamMarketsQuery,
  StreamPricesQuery,
} from './schemas.js';
import { streamedTokens } from './symbols.js';

/** What every live-data stream's description says of the mechanism (docs/api.md#event-streams). */
const MECHANISM =
  'A comment line after 15 s without any other line keeps the connection alive. Open streams are limited per ' +
  'key (3), per account (10), per client address (20) and per server, counted together with the other event ' +
  'streams and across instances: past a limit 429 `STREAM_LIMIT_EXCEEDED` naming it in `details.limit` ' +
  '(`perKey`, `perAccount`, `perAddress`, `perProcess`). A client too slow to read (over 1 MiB unsent, or ' +
  'unsent data 30 s old) gets `event: error` `SLOW_CONSUMER` and the stream ends; a server shutting down ' +
  'sends `event: error` `SHUTTING_DOWN` (docs/api.md#event-streams).';

function billingNote(minuteUsd: string): string {
  return (
    `Metered: ${minuteUsd} USD per started minute of connection (\`STREAM_MINUTE_USD\`), the first paid at ` +
    'connect (402 `INSUFFICIENT_BALANCE` before the stream opens if it cannot be), each next one at its start; ' +
    'when the balance cannot pay a minute the stream sends `event: error` `INSUFFICIENT_BALANCE` and ends. ' +
    'The first event is `event: stream` `{ requestId, minuteUsd, limits }` (docs/streams.md#billing).'
  );
}

/** The live-data streams (docs/streams.md): prices, markets. */
export function liveStreamRoutes(
  app: FastifyInstance,
  deps: BaseDeps & {
    ports: { prices: PriceService };
    edge: { meterMinutes: MeterMinutes; streams: EventStreams };
    settings: LiveStreamSettings;
  },
): void {
  const { edge, settings } = deps;
  const prices = new PriceFeed({
    prices: deps.ports.prices,
    clock: deps.clock,
    log: deps.log,
    intervalMs: settings.priceIntervalMs,
    unpricedPerAccount: settings.unpricedPerAccount,
  });
  app.addHook('onClose', async () => prices.close());
  const markets = new MarketFeed({ db: deps.db, log: deps.log });
  const minuteUsd = formatUsd(settings.minuteMicros);

  defineRoute(app, {
    method: 'GET',
    url: '/stream/prices',
    operationId: 'streamPrices',
    responseName: 'PriceStreamEvent',
    summary: 'Live VWAPs of up to 50 tokens, as server-sent events',
    description:
      'A `text/event-stream` that stays open. After `event: stream`, one `event: price` per symbol (the ' +
      'snapshot: the single price without its cost fields), then one whenever a symbol’s VWAP changes — at most ' +
      `one per symbol per \`STREAM_PRICE_INTERVAL_MS\` (default 1000). \`symbols\`: 1–${MAX_BATCH_SYMBOLS} ` +
      'symbols or mints, comma-separated, read as the batch reads them (more: 400 `BATCH_LIMIT_EXCEEDED`; a ' +
      'malformed one: 400 `INVALID_SYMBOL`; a symbol the registry does not know: 404 `SYMBOL_NOT_FOUND`; all ' +
      'before anything is charged; a request line and headers over 16 KiB: 431 `HEADERS_TOO_LARGE`, before any ' +
      'route runs). A token that cannot be priced right now gets `event: unavailable` ' +
      '`{ requestId, symbol, error: { code, message }, at }` instead, and `event: price` again once it can. ' +
      'One account’s streams may follow at most `STREAM_UNPRICED_PER_ACCOUNT` (default 50) mints outside the ' +
      'token registry that have no price: past it, 429 `STREAM_LIMIT_EXCEEDED` with `details.limit` ' +
      '`unpricedPerAccount` (docs/streams.md#mints-without-a-price). ' +
      'Every event has an `id`; a client reconnecting with `Last-Event-ID` gets the current prices (what it ' +
      `missed that still holds). ${billingNote(minuteUsd)} ${MECHANISM}`,
    tags: ['streams'],
    permission: 'price',
    querystring: StreamPricesQuery,
    response: PriceStreamEvent,
    stream: { headers: PriceStreamHeaders, minutePrice: settings.minuteMicros },
    errors: [
      'BATCH_LIMIT_EXCEEDED',
      'INVALID_SYMBOL',
      'SYMBOL_NOT_FOUND',
      'INSUFFICIENT_BALANCE',
      'QUOTA_EXCEEDED',
      'SERVICE_UNAVAILABLE',
      'STREAM_LIMIT_EXCEEDED',
      'HEADERS_TOO_LARGE',
    ],
    handler: async ({ principal, requestId, query }, request, reply) => {
      // Bad input is refused here, before a slot is taken or a minute charged.
      const tokens = streamedTokens(query.symbols);
      const lastEventId = request.headers['last-event-id'];
      await edge.streams.open(request, reply, {
        requestId,
        owner: principal,
        source: () =>
          prices.source(principal, tokens, typeof lastEventId === 'string' ? lastEventId : undefined),
        meter: edge.meterMinutes({ principal, requestId, operation: 'streamPrices' }, settings.minuteMicros),
        announce: {
          limits: {
            symbols: MAX_BATCH_SYMBOLS,
            priceIntervalMs: settings.priceIntervalMs,
            unpricedPerAccount: settings.unpricedPerAccount,
          },
        },
      });
      // The response is hijacked and streams on; nothing more is sent from here.
      return {} as never;
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/stream/markets',
    operationId: 'streamMarkets',
    dashboardTwin: true,
    responseName: 'MarketStreamEvent',
    summary: 'Live state, trades and resolution of up to 50 markets, as server-sent events',
    description:
      'A `text/event-stream` that stays open. After `event: stream`, one `event: market` per market (the ' +
      'snapshot: status, each outcome’s `lastPrice` and `probability`, `tradingStats`), then `event: market` on ' +
      'every change of status, prices or probability, `event: trade` for each trade and `event: resolved` when ' +
      `the market resolves. \`ids\`: 1–${MAX_STREAM_MARKETS} market ids, comma-separated (more, or a malformed ` +
      'one: 400 `VALIDATION_ERROR`; a market that does not exist or is DRAFT: 404 `NOT_FOUND`; all before ' +
      'anything is charged; a request line and headers over 16 KiB: 431 `HEADERS_TOO_LARGE`, before any route ' +
      'runs). Every event has an `id`; a client reconnecting with `Last-Event-ID` gets the ' +
      'events it missed of the last 24 hours (an older or unknown id: a new snapshot; a malformed one: 400 ' +
      `\`VALIDATION_ERROR\`). ${billingNote(minuteUsd)} ${MECHANISM}`,
    tags: ['streams'],
    permission: 'markets',
    querystring: StreamMarketsQuery,
    response: MarketStreamEvent,
    stream: { headers: MarketStreamHeaders, minutePrice: settings.minuteMicros },
    errors: [
      'VALIDATION_ERROR',
      'NOT_FOUND',
      'INSUFFICIENT_BALANCE',
      'QUOTA_EXCEEDED',
      'SERVICE_UNAVAILABLE',
      'STREAM_LIMIT_EXCEEDED',
      'HEADERS_TOO_LARGE',
    ],
    handler: async ({ principal, requestId, query }, request, reply) => {
      // Bad input and unknown markets are refused here, before a slot is taken or a minute charged.
      const ids = await streamedMarkets(deps.db, query.ids);
      const lastEventId = request.headers['last-event-id'];
      const resume = readResume(typeof lastEventId === 'string' ? lastEventId : undefined, ids.length);
      await edge.streams.open(request, reply, {
        requestId,
        owner: principal,
        source: () => markets.source(ids, resume, requestId),
        meter: edge.meterMinutes({ principal, requestId, operation: 'streamMarkets' }, settings.minuteMicros),
        announce: { limits: { markets: MAX_STREAM_MARKETS } },
      });
      return {} as never;
    },
  });
}
