import { loadResolver, type MarketSource, type Resolver, type SibylData } from './ai/index.js';
import { type Attestations, createAttestations } from './attestations/index.js';
import type { Config } from './config.js';
import { createContext } from './context.js';
import type { Database } from './db/database.js';
import { HistoricalService, storedPriceAt } from './historical/index.js';
import { type AiJobResolver, aiJobResolver } from './jobs/index.js';
import { keyNames } from './keys/index.js';
import type { Clock } from './lib/clock.js';
import type { Log } from './logger.js';
import { marketFacts, marketSource } from './markets/index.js';
import {
  type CandleVenue,
  createLiveVenues,
  createPriceService,
  type PriceService,
  type PriceVenue,
} from './prices/index.js';
import {
  type CallbackOutbox,
  createSecretBox,
  createWebhookOutbox,
  loadTransport,
  type SecretBox,
  type WebhookTransport,
} from './webhooks/index.js';

/**
 * The outside world as the features reach it: price and candle venues, the AI models, the webhook
 * transport and outbox, the secret box, the market source. Built once per process by
 * `createPorts`, for the API, the worker and the command line alike.
 */
export interface Ports {
  prices: PriceService;
  historical: HistoricalService;
  resolver: Resolver;
  /** The AI resolution scheduled AI jobs run. */
  aiJobs: AiJobResolver;
  /** The webhook outbox results' callbacks are written to. */
  callbacks: CallbackOutbox;
  /** How webhook secrets are kept at rest. */
  secrets: SecretBox;
  /** How webhooks are sent. */
  webhookTransport: WebhookTransport;
  /** Where `POST /ai/resolve { marketId }` finds markets. */
  markets: MarketSource;
  /** Signs answers (docs/attestations.md). */
  attestations: Attestations;
  /** The names of an account's keys (the keys room's), for the ledger's usage report by key. */
  keyNames: typeof keyNames;
  /** Releases what `createPorts` opened (a transport handed in stays open: its owner closes it). */
  close(): Promise<void>;
}

/**
 * The one list of what a caller may hand in instead of the configured port: tests give venues on
 * local servers, a recording outbox, a transport to a local receiver. Anything left out is built
 * from the configuration.
 */
export interface PortOverrides {
  /** Live price venues; default: the configured registry. */
  liveVenues?: PriceVenue[];
  /** Live candle venues for historical prices; default: the configured registry. */
  candleVenues?: CandleVenue[];
  /** Default: the real outbox (rows of webhook_deliveries; URLs checked at submit). */
  callbacks?: CallbackOutbox;
  /** Default: the guarded HTTPS transport of the configuration. */
  webhookTransport?: WebhookTransport;
  /** Default: from SECRET_ENCRYPTION_KEY. */
  secrets?: SecretBox;
  /** Default: the markets tables. */
  markets?: MarketSource;
  /** Default: the configured models. */
  aiJobs?: AiJobResolver;
  /** Default: the configured key (ATTESTATION_SECRET_KEY, or the embedded database's key file). */
  attestations?: Attestations;
  /** Where the ports built here say what the operator must know (a retired attestation key); default: nowhere. */
  log?: Log;
}

/**
 * Sibyl's own data as the AI models' tools read it (docs/ai.md#sibyls-tools): the stored candles
 * (the historical room) and the markets (the markets room), on `db`, with the spot price's rules.
 */
export function sibylData(config: Pick<Config, 'prices'>, db: Database, clock: Clock): SibylData {
  const ctx = createContext(db, clock);
  const rules = { outlierTolerance: config.prices.outlierTolerance, minSources: config.prices.minSources };
  return {
    price: (symbol, at) => storedPriceAt(ctx, symbol, at, rules),
    market: (id) => marketFacts(ctx, id),
  };
}

/**
 * Builds every port from the configuration, but those `overrides` hands in. The constructors that
 * bring the AI SDKs and an HTTP agent are loaded here, through their doors' `loadResolver` and
 * `loadTransport`, so that a command importing those doors does not load them.
 */
export async function createPorts(
  config: Config,
  db: Database,
  clock: Clock,
  overrides: PortOverrides = {},
): Promise<Ports> {
  const needsRegistry = !overrides.liveVenues || !overrides.candleVenues;
  const registry = needsRegistry ? createLiveVenues(config.prices, clock) : undefined;
  const [resolver, webhookTransport] = await Promise.all([
    loadResolver(config.ai, clock, sibylData(config, db, clock)),
    overrides.webhookTransport ?? loadTransport(config.webhooks),
  ]);
  const attestations =
    overrides.attestations ?? createAttestations(db, config.attestations, clock, overrides.log);
  return {
    prices: createPriceService(config.prices, clock, overrides.liveVenues ?? registry?.price ?? []),
    historical: new HistoricalService(db, overrides.candleVenues ?? registry?.candles ?? [], clock, {
      outlierTolerance: config.prices.outlierTolerance,
    }),
    resolver,
    aiJobs: overrides.aiJobs ?? aiJobResolver(resolver),
    callbacks: overrides.callbacks ?? createWebhookOutbox(config.webhooks),
    secrets: overrides.secrets ?? createSecretBox(config.webhooks),
    webhookTransport,
    markets: overrides.markets ?? marketSource,
    attestations,
    keyNames,
    async close() {
      if (!overrides.webhookTransport) await webhookTransport.close();
      if (!overrides.attestations) await attestations.close();
    },
  };
}
