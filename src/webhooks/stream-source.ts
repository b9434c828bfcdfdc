import type { Database } from '../db/database.js';
import { foldedWakes, NotificationFanOut } from '../http/event-stream/fan-out.js';
import type { StreamSink, StreamSource } from '../http/event-stream/stream.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { signingSecrets } from './delivery.js';
import type { SecretBox } from './secret-box.js';
import { signedRequest } from './signing.js';
import * as sql from './sql.js';

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

export interface WebhookFeedDeps {
  db: Database;
  clock: Clock;
  log: Log;
  secrets: SecretBox;
}

/**
 * What `GET /webhooks/stream` sends (docs/webhooks.md#local-development): each new delivery of the
 * account, signed as it is delivered. Streams are woken by the notification every statement that
 * creates a delivery sends with its account id (`EVENTS_CHANNEL`, sql.ts), one LISTEN per process;
 * each stream reads only its account's newest rows (the account index).
 */
export class WebhookEventFeed {
  private readonly fanOut: NotificationFanOut;

  constructor(private readonly deps: WebhookFeedDeps) {
    this.fanOut = new NotificationFanOut(deps.db, sql.EVENTS_CHANNEL, deps.log);
  }

  /**
   * One stream's source: the account's events from now on or, with `lastEventId` (the `Last-Event-ID`
   * of a reconnecting client), those after that one first, if it is one of the account's events of
   * the last 24 hours. Listening starts and the resume point is read here, before the answer starts.
   */
  async source(accountId: string, requestId: string, lastEventId?: string): Promise<StreamSource> {
    const reader = new WebhookEventReader(this.deps, accountId, requestId);
    const unsubscribe = await this.fanOut.subscribe(accountId, reader.wake);
    try {
      const now = this.deps.clock.now();
      const [resume] = lastEventId
        ? await this.deps.db.query<{ created_at: Date }>(sql.STREAM_RESUME_POINT, [
            lastEventId,
            accountId,
            new Date(now.getTime() - REPLAY_MS),
          ])
        : [];
      reader.from(resume ? resume.created_at : now, unsubscribe, lastEventId, resume !== undefined);
      return reader;
    } catch (err) {
      unsubscribe();
      throw err;
    }
  }
}

/** One open stream's reads: every row of its account created since it opened (or resumed), each once. */
class WebhookEventReader implements StreamSource {
  private readonly sent = new Map<string, number>();
  private openedAt = 0;
  private newest = 0;
  private sink: StreamSink | undefined;
  private note = '';
  private stopped = false;
  private unsubscribe: () => void = () => {};
  readonly wake: () => void;

  constructor(
    private readonly deps: WebhookFeedDeps,
    private readonly accountId: string,
    private readonly requestId: string,
  ) {
    this.wake = foldedWakes(
      () => this.look(),
      (err) => deps.log.warn({ err }, 'webhook stream: reading events failed'),
    );
  }

  from(opened: Date, unsubscribe: () => void, lastEventId: string | undefined, resumed: boolean): void {
    this.openedAt = opened.getTime();
    this.newest = this.openedAt;
    this.unsubscribe = unsubscribe;
    if (lastEventId && resumed) this.sent.set(lastEventId, this.openedAt);
    this.note = !lastEventId
      ? ''
      : resumed
        ? `; the events after ${lastEventId} first`
        : `; ${lastEventId} is not an event of this account of the last 24 hours: events from now on (GET /webhooks/deliveries lists the others)`;
  }

  start(sink: StreamSink): void {
    this.sink = sink;
    sink.comment(`sibyl webhook stream ${this.requestId}${this.note}`);
    // Also finds what was created between the LISTEN and now (a notification before the start is not read).
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }

  private async look(): Promise<void> {
    const sink = this.sink;
    if (!sink || this.stopped) return;
    const { db, clock, secrets } = this.deps;
    // Pages in (created_at, id) order from the lookback window's start: a page of rows already sent
    // moves the cursor on like any other (a burst larger than a page is read to its end).
    let after: [Date, string] = [new Date(this.newest - LOOKBACK_MS), ''];
    for (;;) {
      const rows = await db.query<StreamRow>(sql.STREAM_EVENTS, [this.accountId, ...after, BATCH]);
      const last = rows.at(-1);
      if (last) after = [last.created_at, last.id];
      const fresh = rows.filter((row) => !this.sent.has(row.id) && row.created_at.getTime() >= this.openedAt);
      for (const row of fresh) {
        const at = clock.now();
        const request = signedRequest(row.id, row.payload, signingSecrets(secrets, row, at), at);
        const data = { requestId: this.requestId, id: row.id, headers: request.headers, body: request.body };
        if (!sink.send({ event: 'webhook', id: row.id, data })) return;
        this.sent.set(row.id, row.created_at.getTime());
        this.newest = Math.max(this.newest, row.created_at.getTime());
      }
      for (const [id, created] of this.sent) if (created < this.newest - LOOKBACK_MS) this.sent.delete(id);
      if (rows.length < BATCH) return;
    }
  }
}
