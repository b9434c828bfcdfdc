import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { signingSecrets } from './delivery.js';
import type { SecretBox } from './secret-box.js';
import { signedRequest } from './signing.js';
import * as sql from './sql.js';

export interface StreamSettings {
  /** Streams one key may hold open at once. */
  streamsPerKey: number;
  /** Streams one API process holds open at once. */
  maxStreams: number;
  /** A comment line this often, so proxies and clients see a live connection. */
  heartbeatMs: number;
}

interface StreamRow {
  id: string;
  account_id: string;
  payload: string;
  created_at: Date;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: Date | null;
}

/**
 * How far back each look reaches behind the newest event a stream has sent: a delivery's
 * `created_at` is taken before its transaction commits, so a slower transaction can commit a row
 * older than one already sent. Rows already sent in that window are skipped by id.
 */
const LOOKBACK_MS = 60_000;
const BATCH = 100;
/** How far back `Last-Event-ID` can resume a stream (events are kept longer; see GET /webhooks/deliveries). */
export const REPLAY_MS = 24 * 3_600_000;

/** One open stream: an account's events, written to a hijacked response as server-sent events. */
class Stream {
  private readonly sent = new Map<string, number>();
  private newest: number;
  private readonly openedAt: number;
  private running = false;
  private again = false;
  private readonly heartbeat: NodeJS.Timeout;
  closed = false;

  constructor(
    readonly keyId: string,
    private readonly requestId: string,
    private readonly accountId: string,
    private readonly reply: FastifyReply,
    private readonly hub: WebhookStreams,
    opened: Date,
    resumedAfter?: string,
  ) {
    this.openedAt = opened.getTime();
    this.newest = this.openedAt;
    if (resumedAfter) this.sent.set(resumedAfter, this.openedAt);
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), hub.settings.heartbeatMs);
    this.heartbeat.unref();
    reply.raw.on('close', () => this.close());
  }

  /** Looks for events not yet sent; one look at a time, and one more if woken meanwhile. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.look()
      .catch((err: unknown) => this.hub.deps.log.warn({ err }, 'webhook stream: reading events failed'))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async look(): Promise<void> {
    const { db, clock, secrets } = this.hub.deps;
    // Pages in (created_at, id) order from the lookback window's start: a page of rows already sent
    // moves the cursor on like any other (a burst larger than a page is read to its end).
    let after: [Date, string] = [new Date(this.newest - LOOKBACK_MS), ''];
    for (;;) {
      const rows = await db.query<StreamRow>(sql.STREAM_EVENTS, [this.accountId, ...after, BATCH]);
      const last = rows.at(-1);
      if (last) after = [last.created_at, last.id];
      const fresh = rows.filter((row) => !this.sent.has(row.id) && row.created_at.getTime() >= this.openedAt);
      for (const row of fresh) {
        if (this.closed) return;
        const at = clock.now();
        const request = signedRequest(row.id, row.payload, signingSecrets(secrets, row, at), at);
        this.write(
          streamEventText({
            requestId: this.requestId,
            id: row.id,
            headers: request.headers,
            body: request.body,
          }),
        );
        this.sent.set(row.id, row.created_at.getTime());
        this.newest = Math.max(this.newest, row.created_at.getTime());
      }
      for (const [id, created] of this.sent) if (created < this.newest - LOOKBACK_MS) this.sent.delete(id);
      if (rows.length < BATCH) return;
    }
  }

  write(text: string): void {
    if (!this.closed) this.reply.raw.write(text);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.reply.raw.end();
    this.hub.forget(this);
  }
}

/**
 * The text of one event: `event: webhook`, its id, and `{ requestId, id, headers, body }` as its
 * data (`requestId`: the stream's own request, as every answer carries it).
 */
export function streamEventText(event: {
  requestId: string;
  id: string;
  headers: Record<string, string>;
  body: string;
}): string {
  return `event: webhook\nid: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * `GET /webhooks/stream` (DESIGN §9, local development): every open stream of this process, woken by
 * the NOTIFY that already wakes the delivery workers when a delivery is written. The LISTEN is held
 * only while a stream is open; each stream reads only its account's newest rows (the account index).
 */
export class WebhookStreams {
  private readonly streams = new Set<Stream>();
  private readonly perKey = new Map<string, number>();
  private unlisten: Promise<() => Promise<void>> | undefined;
  private closing = false;

  constructor(
    readonly deps: { db: Database; clock: Clock; log: Log; secrets: SecretBox },
    readonly settings: StreamSettings,
  ) {}

  /**
   * Opens a stream on `reply` (hijacked), or throws 429 / 503 past the limits. With `lastEventId`
   * (the `Last-Event-ID` of a reconnecting client) it first sends the account's events after that one,
   * if it is one of the last 24 hours; else it starts now and says so in a comment line.
   */
  async open(
    principal: { keyId: string; accountId: string },
    reply: FastifyReply,
    requestId: string,
    lastEventId?: string,
  ) {
    if (this.closing)
      throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down', {
        headers: { 'retry-after': '5' },
      });
    const held = this.perKey.get(principal.keyId) ?? 0;
    if (held >= this.settings.streamsPerKey) {
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `This key already holds ${held} open webhook streams (at most ${this.settings.streamsPerKey}); close one first`,
        { details: { limit: this.settings.streamsPerKey }, headers: { 'retry-after': '5' } },
      );
    }
    if (this.streams.size >= this.settings.maxStreams) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Too many open webhook streams on this server; retry later', {
        headers: { 'retry-after': '5' },
      });
    }
    this.unlisten ??= this.deps.db.listen(sql.DELIVERIES_CHANNEL, () => {
      for (const stream of this.streams) stream.wake();
    });
    await this.unlisten;
    const now = this.deps.clock.now();
    const [resume] = lastEventId
      ? await this.deps.db.query<{ created_at: Date }>(sql.STREAM_RESUME_POINT, [
          lastEventId,
          principal.accountId,
          new Date(now.getTime() - REPLAY_MS),
        ])
      : [];
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': requestId,
    });
    const stream = resume
      ? new Stream(
          principal.keyId,
          requestId,
          principal.accountId,
          reply,
          this,
          resume.created_at,
          lastEventId,
        )
      : new Stream(principal.keyId, requestId, principal.accountId, reply, this, now);
    this.streams.add(stream);
    this.perKey.set(principal.keyId, held + 1);
    const note = !lastEventId
      ? ''
      : resume
        ? `; the events after ${lastEventId} first`
        : `; ${lastEventId} is not an event of this account of the last 24 hours: events from now on (GET /webhooks/deliveries lists the others)`;
    stream.write(`: sibyl webhook stream ${requestId}${note}\nretry: 2000\n\n`);
    if (resume) stream.wake();
  }

  forget(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    const held = (this.perKey.get(stream.keyId) ?? 1) - 1;
    if (held <= 0) this.perKey.delete(stream.keyId);
    else this.perKey.set(stream.keyId, held);
    if (this.streams.size === 0) this.stopListening();
  }

  private stopListening(): void {
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    void unlisten?.then((stop) => stop()).catch(() => {});
  }

  get size(): number {
    return this.streams.size;
  }

  /** Ends every stream (the server is closing): clients see the end and reconnect elsewhere. */
  async close(): Promise<void> {
    this.closing = true;
    for (const stream of [...this.streams]) stream.close();
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    if (unlisten) await (await unlisten)().catch(() => {});
  }
}

/** Ends the streams before the server waits for its connections to close. */
export function closeStreamsOnShutdown(app: FastifyInstance, streams: WebhookStreams): void {
  app.addHook('preClose', async () => {
    await streams.close();
  });
}
