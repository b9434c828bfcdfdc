import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors.js';
import type { Log } from '../../logger.js';
import type { RoutePrincipal } from '../route-spec.js';
import type { SlotScope } from './slots.js';
import {
  commentText,
  errorEventText,
  eventText,
  requestIdMember,
  type StreamErrorCode,
  type StreamEvent,
  sharedEventText,
} from './wire.js';

/** What a source writes to: one open stream. */
export interface StreamSink {
  /** The request that opened the stream (every event's `requestId` where an answer would carry one). */
  readonly requestId: string;
  readonly closed: boolean;
  /** Bytes written and not yet taken by the network: a source may coalesce while it grows. */
  readonly backlogBytes: number;
  /**
   * Writes one event; false once the stream is closed (the source should stop sending). What a
   * stream is sent in one turn of the event loop goes to its socket as one write.
   */
  send(event: StreamEvent): boolean;
  comment(text: string): void;
  /** Ends the stream; with a reason, its last event is `event: error` saying it. */
  close(reason?: StreamEnd): void;
}

export interface StreamEnd {
  code: StreamErrorCode;
  message: string;
}

/**
 * What a stream sends: started once the stream is open (a replay, snapshots, then live events),
 * stopped once when it closes for any reason (the client left, too slow, unpaid, shutdown).
 */
export interface StreamSource {
  start(sink: StreamSink): void | Promise<void>;
  stop(): void;
}

/** Per-minute metering: the stream pays each minute at its start; a refusal ends it. */
export interface StreamMeter {
  /** The price of a minute, as the `stream` event states it (a USD string). */
  minuteUsd: string;
  /**
   * Pays minute `minute` (0 at connect, before the answer starts) beginning at `startsAt`, or throws
   * an AppError: at connect it is the HTTP answer (402 INSUFFICIENT_BALANCE), later the stream's
   * last event, and the stream closes.
   */
  payMinute(minute: number, startsAt: Date): Promise<void>;
}

/**
 * Makes a paid stream's meter: each started minute of `minuteMicros` charged under the stream's
 * operation and request id, as a request billed after its answer is (docs/streams.md#billing). The
 * gate offers it (`deps.edge.meterMinutes`, src/gate/billing/meter.ts), so that a room meters its
 * streams without the ledger's internals.
 */
export type MeterMinutes = (
  stream: { principal: RoutePrincipal; requestId: string; operation: string },
  minuteMicros: bigint,
) => StreamMeter;

/** The bounds of one stream's send queue and its keep-alive (docs/architecture.md#event-streams). */
export interface StreamBounds {
  /** A comment line after this long without any other line. */
  heartbeatMs: number;
  /** Unsent bytes past which the client is too slow: 1 MiB. */
  maxQueueBytes: number;
  /** Age of the oldest unsent write past which the client is too slow: 30 s. */
  maxQueueAgeMs: number;
  /** How long a closed stream's remaining bytes may wait for a client that does not read them. */
  closeGraceMs: number;
}

export const MINUTE_MS = 60_000;

/**
 * Streams with text waiting for the end of this turn of the event loop: each gets one write then, so
 * that what a fan-out sends a stream at once (a tick's prices, a read's market events) costs one
 * write and one callback, not one per event. One queue and one setImmediate for the process.
 */
const waiting = new Set<EventStream>();
let flushScheduled = false;

function flushWaiting(): void {
  flushScheduled = false;
  const streams = [...waiting];
  waiting.clear();
  for (const stream of streams) stream.flush();
}

/**
 * One open stream on a hijacked response. Its send queue is the socket's own buffer — nothing is
 * buffered in JavaScript beyond the current turn of the event loop — measured by `writableLength`,
 * with the time of each write still unsent (a write's callback runs once the kernel has taken it),
 * so the oldest unsent data has an age.
 */
export class EventStream implements StreamSink {
  closed = false;
  private lastWriteAt: number;
  /** Clock times of the writes not yet handed to the network, oldest first from `unsentHead`. */
  private unsent: number[] = [];
  private unsentHead = 0;
  private source: StreamSource | undefined;
  private minute = 1;
  private paying = false;
  /** When the request's access last passed its checks again (`access`). */
  private checkedAt: number;
  /** The access check running now, shared by the periodic look and a minute about to be paid. */
  private checking: Promise<boolean> | undefined;
  /** Text sent during this turn of the event loop, written at its end (`flush`). */
  private pending = '';
  /** `{"requestId":"…",`: the start of every event with shared data. */
  private readonly member: string;
  /** The write callback, one per stream (not a closure per write). */
  private readonly onTaken = () => this.taken();

  constructor(
    readonly id: string,
    readonly requestId: string,
    readonly scopes: readonly SlotScope[],
    private readonly raw: ServerResponse,
    private readonly deps: {
      now: () => number;
      log: Log;
      bounds: StreamBounds;
      meter: StreamMeter | undefined;
      /**
       * The checks that admitted the request, run again (the key or the session, its account's
       * status, the permission, the key's restrictions): throws the refusal the same request would
       * get now. None: the stream is never checked again (a test's stream).
       */
      access: (() => Promise<void>) | undefined;
      /** How often `access` runs: the auth cache's sync, `AUTH_CACHE_SYNC_MS`. */
      accessCheckMs: number;
      closed: (stream: EventStream) => void;
    },
    private readonly openedAt: number,
    /** Whose stream it is: an access change of this account checks it at once. */
    readonly accountId: string,
  ) {
    this.lastWriteAt = openedAt;
    this.checkedAt = openedAt;
    this.member = requestIdMember(requestId);
    raw.on('close', () => this.close());
  }

  get backlogBytes(): number {
    return this.raw.writableLength + this.pending.length;
  }

  send(event: StreamEvent): boolean {
    const { shared, id } = event;
    this.write(
      shared !== undefined && id !== undefined
        ? sharedEventText(event.event, id, this.member, shared)
        : eventText(event),
    );
    return !this.closed;
  }

  comment(text: string): void {
    this.write(commentText(text));
  }

  /** Raw field lines (`retry: 2000`), for the opening; written at the end of this turn. */
  write(text: string): void {
    if (this.closed) return;
    if (this.pending === '') {
      waiting.add(this);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushWaiting);
      }
    }
    this.pending += text;
  }

  /** Writes what this turn sent, at once; a client over 1 MiB behind is too slow. */
  flush(): void {
    const text = this.pending;
    if (text === '' || this.closed) return;
    this.pending = '';
    const now = this.deps.now();
    this.lastWriteAt = now;
    this.unsent.push(now);
    this.raw.write(text, this.onTaken);
    if (this.raw.writableLength > this.deps.bounds.maxQueueBytes) this.tooSlow('over 1 MiB unsent');
  }

  private taken(): void {
    this.unsentHead += 1;
    if (this.unsentHead >= this.unsent.length) {
      this.unsent = [];
      this.unsentHead = 0;
    } else if (this.unsentHead >= 1024) {
      // A busy stream may never be fully flushed at a callback: drop the taken ones now and then.
      this.unsent = this.unsent.slice(this.unsentHead);
      this.unsentHead = 0;
    }
  }

  /** Runs the source; a source that fails ends the stream (its error logged, nothing internal sent). */
  async run(source: StreamSource): Promise<void> {
    this.source = source;
    try {
      await source.start(this);
    } catch (err) {
      this.deps.log.error({ err }, 'event stream: the source failed');
      this.close({ code: 'INTERNAL_ERROR', message: 'The stream failed; reconnect' });
    }
  }

  /**
   * The holder's periodic look: keep-alive, a queue too old, the request's access due to be checked
   * again (the check returned, to be awaited), the next minute due.
   */
  tick(now: number): Promise<boolean> | undefined {
    if (this.closed) return undefined;
    // Only bytes this process still holds count: a write the kernel took has its callback pending a
    // moment (longer if the process was held up), and is not the client's delay.
    const oldest = this.unsent[this.unsentHead];
    if (
      oldest !== undefined &&
      this.raw.writableLength > 0 &&
      now - oldest >= this.deps.bounds.maxQueueAgeMs
    ) {
      this.tooSlow('unsent data 30 s old');
      return;
    }
    if (now - this.lastWriteAt >= this.deps.bounds.heartbeatMs) this.comment('keep-alive');
    const check = now - this.checkedAt >= this.deps.accessCheckMs ? this.checkAccess() : undefined;
    if (this.deps.meter && !this.paying && now >= this.openedAt + this.minute * MINUTE_MS) void this.pay(now);
    return check;
  }

  /**
   * Checks the request's access again (docs/api.md#event-streams): a key revoked or expired, an
   * account suspended, a session ended, a permission or an address no longer allowed ends the
   * stream with the code the same request would get now, as its last event. A check that cannot be
   * made (the database unreachable) ends it too: access is never assumed. True while it may go on.
   */
  checkAccess(): Promise<boolean> {
    const access = this.deps.access;
    if (!access || this.closed) return Promise.resolve(!this.closed);
    this.checking ??= access()
      .then(
        () => {
          this.checkedAt = this.deps.now();
          return !this.closed;
        },
        (err: unknown) => {
          if (err instanceof AppError) this.close({ code: err.code, message: err.message });
          else {
            this.deps.log.warn({ err }, 'event stream: access could not be checked again; stream ended');
            this.close({ code: 'SERVICE_UNAVAILABLE', message: 'Access could not be checked; reconnect' });
          }
          return false;
        },
      )
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  /** Pays every minute that has started (more than one if the process was held up), one at a time. */
  private async pay(now: number): Promise<void> {
    const meter = this.deps.meter;
    if (!meter) return;
    this.paying = true;
    try {
      while (!this.closed && now >= this.openedAt + this.minute * MINUTE_MS) {
        // A minute is never charged to a stream its caller may no longer hold.
        if (!(await this.checkAccess())) return;
        await meter.payMinute(this.minute, new Date(this.openedAt + this.minute * MINUTE_MS));
        this.minute += 1;
      }
    } catch (err) {
      if (err instanceof AppError) this.close({ code: err.code, message: err.message });
      else {
        this.deps.log.error({ err }, 'event stream: paying a minute failed');
        this.close({ code: 'INTERNAL_ERROR', message: 'The stream could not be metered; reconnect' });
      }
    } finally {
      this.paying = false;
    }
  }

  private tooSlow(what: string): void {
    this.close({
      code: 'SLOW_CONSUMER',
      message: `The client reads too slowly (${what}); reconnect, and read events as they come`,
    });
  }

  close(reason?: StreamEnd): void {
    if (this.closed) return;
    const raw = this.raw;
    // What was sent before the end goes first (not a client too slow for it: it is ending anyway).
    const pending = this.pending;
    this.pending = '';
    waiting.delete(this);
    this.closed = true;
    if (!raw.destroyed) {
      if (pending !== '') raw.write(pending);
      if (reason) raw.write(errorEventText(reason.code, reason.message, this.requestId));
      raw.end();
      // A client that does not read would hold the unsent bytes (and the socket) for ever.
      if (!raw.writableFinished) {
        const grace = setTimeout(() => raw.destroy(), this.deps.bounds.closeGraceMs);
        grace.unref();
        raw.once('close', () => clearTimeout(grace));
      }
    }
    this.unsent = [];
    this.unsentHead = 0;
    try {
      this.source?.stop();
    } catch (err) {
      this.deps.log.error({ err }, 'event stream: stopping the source failed');
    }
    this.deps.closed(this);
  }
}
