import createClient, { type Client } from 'openapi-fetch';
import { type PageIterators, pageIterators } from './pages.js';
import { type AiRequestRecord, type WaitOptions, waitForResolution } from './resolution.js';
import type { components, paths } from './schema.js';
import {
  eventStream,
  type MarketStreamMessage,
  type PriceStreamMessage,
  type StreamOptions,
} from './streams.js';
import { realSleep, retryingFetch, type Sleep } from './transport.js';

export {
  ATTESTATION_MAGIC,
  ATTESTATION_VERSION,
  type Attestation,
  type AttestationFields,
  decodeAttestation,
  PRICE_ATTESTATION_SIZE,
  type PriceAttestationFields,
  RESOLUTION_ATTESTATION_SIZE,
  RESOLUTION_V1_ATTESTATION_SIZE,
  type ResolutionAttestationFields,
} from './attestation.js';
export {
  type AttestationKeySet,
  evidenceHash,
  hashMarketId,
  hashQuestion,
  hashRequestId,
  hashSymbol,
  type VerifyAttestationOptions,
  verifyAttestation,
  type WithVotesEvidence,
} from './attestation-verify.js';
export { canonicalJson } from './canonical-json.js';
export {
  ED25519_OFFSETS,
  ED25519_PROGRAM_ADDRESS,
  type Ed25519Instruction,
  type Ed25519ProgramAddress,
  ed25519Instruction,
} from './ed25519.js';
export {
  type ErrorBody,
  type ErrorCode,
  requestIdOf,
  SibylApiError,
  SibylTimeoutError,
  unwrap,
} from './errors.js';
export type {
  DeliveryQuery,
  JobQuery,
  JobSummary,
  MarketQuery,
  MarketSummary,
  MarketTrade,
  MarketTradesQuery,
  PageIterators,
  Transaction,
  TransactionQuery,
  WebhookDeliverySummary,
} from './pages.js';
export {
  type AiRequestRecord,
  POLL_INTERVAL_MS,
  type WaitOptions,
  WebhookInbox,
} from './resolution.js';
export type { components, paths } from './schema.js';
export {
  type MarketStreamMessage,
  type PriceStreamMessage,
  readEvents,
  type StreamAnnouncement,
  type StreamMessage,
  type StreamOptions,
} from './streams.js';
export type { Sleep } from './transport.js';
export {
  type SibylEvent,
  type SibylEventOf,
  type SibylEventType,
  verifyEvent,
  verifyWebhook,
  type WebhookHeaders,
  type WebhookPayload,
} from './webhooks.js';

/** Every named schema of the API (`Schemas['PriceResult']`, `Schemas['AiRequestRecord']`, …). */
export type Schemas = components['schemas'];

export interface SibylClientOptions {
  /** Where the service is, without the `/api/v1` path: e.g. `https://api.example.com`. */
  baseUrl: string;
  /** `pk_live_…` or `pk_test_…`. */
  apiKey: string;
  /**
   * How many times a 429 `RATE_LIMIT_EXCEEDED` is retried, each after its `Retry-After`
   * (default 2). A 429 `QUOTA_EXCEEDED` is never retried: its `Retry-After` can be hours.
   */
  maxRateLimitRetries?: number;
  /**
   * How many times a request is retried after a 503, a network error, a 502/504 or a 409
   * `IDEMPOTENCY_KEY_IN_USE` (default 3). A network error, 502 or 504 is retried only when
   * repeating the request is harmless: GET, PUT, DELETE, or a POST with an `Idempotency-Key`.
   */
  maxRetries?: number;
  /** The longest `Retry-After` (seconds) worth waiting for in a retry; a longer one is returned. Default 10. */
  maxRetryAfterSeconds?: number;
  /** Backoff without a `Retry-After`: the first wait is 250–500 ms, doubling, at most this (default 8000 ms). */
  maxRetryDelayMs?: number;
  /** Headers sent with every request (besides the key). */
  headers?: Record<string, string>;
  fetch?: (request: Request) => Promise<Response>;
  /**
   * The `Idempotency-Key` of a new request that takes one (default `crypto.randomUUID()`). A key
   * given in the request's own headers is used instead.
   */
  idempotencyKey?: () => string;
  /** How the client waits (retries, polling); tests hand in one that does not. */
  sleep?: Sleep;
  /** Milliseconds since the epoch, for `waitForResolution`'s timeout (default `Date.now`). */
  now?: () => number;
  /** Jitter source in [0, 1) (default `Math.random`). */
  random?: () => number;
}

export interface SibylClient extends Client<paths>, PageIterators {
  /**
   * Polls `GET /ai/request/:requestId` every 5 seconds (or sooner, when its callback reaches
   * `options.webhooks`) until it is COMPLETED or FAILED, and returns that record.
   */
  waitForResolution(requestId: string, options?: WaitOptions): Promise<AiRequestRecord>;
  /**
   * `GET /stream/prices` (docs/streams.md#prices) as an async iterator of its events, across
   * reconnections: after a cut it reconnects with `Last-Event-ID`, backing off (exponential, jittered,
   * capped); it throws `SibylApiError` on what reconnecting cannot mend (a 4xx such as
   * INSUFFICIENT_BALANCE or SYMBOL_NOT_FOUND). Break out of the loop, or abort `options.signal`, to stop.
   */
  streamPrices(symbols: readonly string[], options?: StreamOptions): AsyncGenerator<PriceStreamMessage>;
  /** `GET /stream/markets` (docs/streams.md#markets), as `streamPrices`: resumes with what it missed. */
  streamMarkets(ids: readonly string[], options?: StreamOptions): AsyncGenerator<MarketStreamMessage>;
}

/**
 * A typed client: paths, parameters, bodies and answers come from the service's OpenAPI document.
 *
 * ```ts
 * const sibyl = createSibylClient({ baseUrl: 'http://127.0.0.1:3000', apiKey });
 * const { data, error } = await sibyl.GET('/api/v1/price/{symbolOrMint}', {
 *   params: { path: { symbolOrMint: 'SOL' } },
 * });
 * ```
 */
export function createSibylClient(options: SibylClientOptions): SibylClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const transport = retryingFetch({
    basePath: new URL(baseUrl).pathname,
    send: options.fetch ?? ((request) => globalThis.fetch(request)),
    sleep,
    random: options.random ?? Math.random,
    newIdempotencyKey: options.idempotencyKey ?? (() => globalThis.crypto.randomUUID()),
    maxRateLimitRetries: options.maxRateLimitRetries ?? 2,
    maxRetries: options.maxRetries ?? 3,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 10,
    retryBaseDelayMs: 500,
    retryMaxDelayMs: options.maxRetryDelayMs ?? 8_000,
  });
  const client = createClient<paths>({
    baseUrl,
    fetch: transport,
    headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
  });
  const streamDeps = {
    baseUrl,
    apiKey: options.apiKey,
    headers: options.headers ?? {},
    fetch: options.fetch ?? ((request: Request) => globalThis.fetch(request)),
    sleep,
    random: options.random ?? Math.random,
  };
  return Object.assign(client, pageIterators(client), {
    streamPrices: (symbols: readonly string[], streamOptions?: StreamOptions) =>
      eventStream(
        streamDeps,
        '/api/v1/stream/prices',
        { symbols: symbols.join(',') },
        streamOptions,
      ) as AsyncGenerator<PriceStreamMessage>,
    streamMarkets: (ids: readonly string[], streamOptions?: StreamOptions) =>
      eventStream(
        streamDeps,
        '/api/v1/stream/markets',
        { ids: ids.join(',') },
        streamOptions,
      ) as AsyncGenerator<MarketStreamMessage>,
    waitForResolution: (requestId: string, waitOptions?: WaitOptions) =>
      waitForResolution(client, { sleep, now }, requestId, waitOptions),
  });
}
