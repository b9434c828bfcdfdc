import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import { formatUsd } from '../../lib/money.js';
import type { Log } from '../../logger.js';
import { metrics } from '../../metrics/metrics.js';
import type { StreamSettings } from './config.js';
import { RENEW_MS, type SlotScope, type StreamSlots, scopesOf, streamLimitError } from './slots.js';
import { EventStream, type StreamBounds, type StreamMeter, type StreamSource } from './stream.js';

/** How a route opens a stream (docs/architecture.md#event-streams). */
export interface StreamOpening {
  requestId: string;
  /** Whose stream it is: the limits per key and per account count it. */
  owner: { keyId: string; accountId: string };
  /**
   * What the stream will send, made once the stream is admitted and before anything is charged or
   * the answer starts: an error thrown here is the HTTP answer (the slots go back).
   */
  source(): StreamSource | Promise<StreamSource>;
  /** Per-minute metering; none: a free stream. */
  meter?: StreamMeter;
  /**
   * Send `event: stream` `{ requestId, minuteUsd, limits }` first: what a minute costs and the limits
   * the stream counts against, with the route's own (`{ symbols: 50 }`). The webhook stream, free,
   * does not.
   */
  announce?: { limits?: Record<string, number> };
}

export interface EventStreamsDeps {
  clock: Clock;
  log: Log;
  settings: StreamSettings;
  slots: StreamSlots;
  /**
   * How often each open stream's access is checked again (docs/api.md#event-streams): the auth
   * cache's sync (`AUTH_CACHE_SYNC_MS`), so a stream ends as soon as a request would be refused.
   */
  accessCheckMs: number;
  /** The client address the per-address limit counts (the one the IP allow lists see). */
  addressOf(request: FastifyRequest): string;
}

const DEFAULT_BOUNDS: Omit<StreamBounds, 'heartbeatMs'> = {
  maxQueueBytes: 1024 * 1024,
  maxQueueAgeMs: 30_000,
  closeGraceMs: 5_000,
};

/** How long a client waits before reconnecting (the `retry:` field). */
const RETRY_MS = 2000;

/**
 * Every open event stream of this process, whichever route opened it: admission against the limits,
 * the answer's start, one periodic look over all streams (keep-alive, slow consumers, minutes due,
 * renewal of the shared slots), and the end of them all at shutdown.
 */
export class EventStreams {
  private readonly streams = new Set<EventStream>();
  /** Each open stream's route, the label of `sibyl_event_streams_open`. */
  private readonly routes = new Map<EventStream, string>();
  /** Streams admitted and not yet open: counted against the per-process limit. */
  private opening = 0;
  private closing = false;
  private timer: NodeJS.Timeout | undefined;
  private renewedAt = 0;
  private readonly releases = new Set<Promise<void>>();
  private readonly bounds: StreamBounds;
  private readonly sweepMs: number;

  constructor(
    private readonly deps: EventStreamsDeps,
    options: { sweepMs?: number; bounds?: Partial<StreamBounds> } = {},
  ) {
    this.bounds = { ...DEFAULT_BOUNDS, heartbeatMs: deps.settings.heartbeatMs, ...options.bounds };
    this.sweepMs = options.sweepMs ?? 1000;
  }

  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream on `reply` (hijacked), or throws: 503 while shutting down, 429
   * STREAM_LIMIT_EXCEEDED past a limit, the source's or the first minute's refusal.
   */
  async open(request: FastifyRequest, reply: FastifyReply, opening: StreamOpening): Promise<void> {
    if (this.closing) throw shuttingDown();
    checkDeclaredPrice(request, opening.meter);
    const { limits } = this.deps.settings;
    if (this.streams.size + this.opening >= limits.perProcess)
      throw streamLimitError('perProcess', limits.perProcess, this.streams.size + this.opening);
    const id = `str_${randomBase62(22)}`;
    const scopes = scopesOf({ ...opening.owner, address: this.deps.addressOf(request) }, limits);
    this.opening += 1;
    const { source, openedAt } = await this.admit(id, scopes, opening).finally(() => {
      this.opening -= 1;
    });

    reply.hijack();
    reply.raw.writeHead(200, {
      // Those the edge set before the handler ran (rate-limit headers, a browser origin's).
      ...headersSet(reply),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': opening.requestId,
    });
    // The route's own access checks, run again while the stream is open (its key, or its session).
    const recheck = request.routeOptions.config.recheckAccess;
    const stream = new EventStream(
      id,
      opening.requestId,
      scopes,
      reply.raw,
      {
        now: () => this.deps.clock.now().getTime(),
        log: this.deps.log,
        bounds: this.bounds,
        meter: opening.meter,
        access: recheck ? () => recheck(request) : undefined,
        accessCheckMs: this.deps.accessCheckMs,
        closed: (closed) => this.forget(closed),
      },
      openedAt,
      opening.owner.accountId,
    );
    this.streams.add(stream);
    const route = request.routeOptions.url ?? 'unmatched';
    this.routes.set(stream, route);
    metrics.eventStreamsOpen(route, 1);
    this.timer ??= setInterval(() => {
      this.sweep().catch((err: unknown) => this.deps.log.warn({ err }, 'event streams: a sweep failed'));
    }, this.sweepMs).unref();
    stream.write(`retry: ${RETRY_MS}\n\n`);
    if (opening.announce) {
      stream.send({
        event: 'stream',
        data: {
          requestId: opening.requestId,
          minuteUsd: opening.meter?.minuteUsd ?? '0.00',
          limits: { ...limits, ...opening.announce.limits },
        },
      });
    }
    // The client may have left while the stream was being opened.
    if (reply.raw.destroyed) stream.close();
    if (!stream.closed) await stream.run(source);
    else source.stop();
  }

  /** Takes the stream's slots, makes its source, pays its first minute: all, or none of them kept. */
  private async admit(id: string, scopes: SlotScope[], opening: StreamOpening) {
    const { clock, slots } = this.deps;
    const refusal = await slots.take(id, scopes, clock.now().getTime());
    if (refusal) throw streamLimitError(refusal.scope.limit, refusal.scope.max, refusal.open);
    let source: StreamSource | undefined;
    try {
      source = await opening.source();
      const openedAt = clock.now().getTime();
      await opening.meter?.payMinute(0, new Date(openedAt));
      if (this.closing) throw shuttingDown();
      return { source, openedAt };
    } catch (err) {
      source?.stop();
      await slots.release(id, scopes);
      throw err;
    }
  }

  /**
   * One look over every open stream: keep-alives, slow consumers, access checks and minutes due, and
   * the shared slots' renewal. Runs every second while a stream is open; tests call it after moving
   * their clock (it resolves once the access checks it started are done).
   */
  async sweep(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const checks: Promise<boolean>[] = [];
    for (const stream of this.streams) {
      const check = stream.tick(now);
      if (check) checks.push(check);
    }
    await Promise.all(checks);
    if (now - this.renewedAt >= RENEW_MS && this.streams.size > 0) {
      this.renewedAt = now;
      await this.deps.slots.renew([...this.streams], now);
    }
  }

  /**
   * The account's keys, status or permissions changed (the auth cache learnt it from the revocation
   * feed, or from this instance's own change): its streams' access is checked at once.
   */
  async accountChanged(accountId: string): Promise<void> {
    const checks: Promise<boolean>[] = [];
    for (const stream of this.streams) if (stream.accountId === accountId) checks.push(stream.checkAccess());
    await Promise.all(checks);
  }

  private forget(stream: EventStream): void {
    if (!this.streams.delete(stream)) return;
    const route = this.routes.get(stream);
    this.routes.delete(stream);
    if (route !== undefined) metrics.eventStreamsOpen(route, -1);
    const release = this.deps.slots.release(stream.id, stream.scopes).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'event streams: releasing a slot failed (its lease will end it)');
    });
    this.releases.add(release);
    void release.finally(() => this.releases.delete(release));
    if (this.streams.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * The instance is stopping: every stream gets `event: error` SHUTTING_DOWN and ends, so its client
   * reconnects (to another instance) at once; new streams are refused (503). Idempotent.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const stream of [...this.streams]) {
      stream.close({
        code: 'SHUTTING_DOWN',
        message: 'This server is shutting down; reconnect (another instance will answer)',
      });
    }
    await Promise.all(this.releases);
    await this.deps.slots.close();
  }
}

/**
 * A stream is metered at the price its route declares (`stream.minutePrice`), which its description
 * states: a route whose meter says otherwise is misdeclared, and none of its streams opens.
 */
function checkDeclaredPrice(request: FastifyRequest, meter: StreamMeter | undefined): void {
  const declared = request.routeOptions.config.minutePrice;
  if (declared === undefined) return; // not declared by defineRoute (a dashboard twin runs the API route's handler)
  const stated = declared === null ? undefined : formatUsd(declared);
  if (meter?.minuteUsd !== stated)
    throw new Error(
      `${request.routeOptions.url}: its stream is metered at ${meter?.minuteUsd ?? 'nothing'} a minute but declares ${stated ?? 'none'}`,
    );
}

function headersSet(reply: FastifyReply): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) headers[name] = value;
  return headers;
}

function shuttingDown(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance', {
    headers: { 'retry-after': '5' },
  });
}
