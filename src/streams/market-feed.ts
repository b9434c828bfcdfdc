import type { Database } from '../db/database.js';
import { validationError } from '../errors.js';
import { foldedWakes, NotificationFanOut } from '../http/event-stream/fan-out.js';
import type { StreamSink, StreamSource } from '../http/event-stream/stream.js';
import { SharedData } from '../http/event-stream/wire.js';
import type { Log } from '../logger.js';
import { MarketLogReader, type MarketLogRow, type MarketState } from '../markets/index.js';

/** One stored row, as every process reads it: one event, or a market's trades (migration 0042). */
type EventRow = MarketLogRow;

/** A stored event ready to fan out: its id and data prepared once, whatever the number of streams. */
interface ReadEvent {
  id: bigint;
  marketId: string;
  /** A `market` event saying the market turned DRAFT: it is never sent (docs/streams.md#markets). */
  draft: boolean;
  /** `m.<id>`, the event's `id:` line. */
  eventId: string;
  kind: string;
  data: SharedData;
}

const DRAFT_STATUS = '"status":"DRAFT"';

/** A row's events after `after` (a row read as "after n" may begin at or before n). */
function readEvents(row: EventRow, after: bigint): ReadEvent[] {
  const lines = row.events === 1 ? [row.data] : row.data.split('\n');
  const first = BigInt(row.id) - BigInt(lines.length) + 1n;
  const events: ReadEvent[] = [];
  lines.forEach((line, k) => {
    const id = first + BigInt(k);
    if (id > after)
      events.push({
        id,
        marketId: row.market_id,
        // `status` is a member of the object itself: a string holding these characters escapes its quotes.
        draft: row.kind === 'market' && line.includes(DRAFT_STATUS),
        eventId: `m.${id}`,
        kind: row.kind,
        data: new SharedData(line),
      });
  });
  return events;
}

const BATCH = 1000;
/** A replay sends no more while this much is written and not yet taken by the client. */
const REPLAY_BACKLOG_BYTES = 256 * 1024;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface MarketFeedDeps {
  db: Database;
  log: Log;
}

/** Where a stream starts: the client's `Last-Event-ID`, read (docs/streams.md#markets). */
export type MarketResume =
  | { kind: 'none' }
  /** A live event's id, or a snapshot's last one: replay what came after, if it is still kept. */
  | { kind: 'after'; id: bigint; text: string }
  /** A snapshot cut short: the snapshot again. */
  | { kind: 'snapshot'; text: string };

/** The largest event id there can be: the sequence's, a PostgreSQL bigint's. */
const MAX_EVENT_ID = 2n ** 63n - 1n;

/**
 * `m.<id>` (a live event) or `m.<upTo>.<k>` (the k-th event of a snapshot taken up to `upTo`). An id
 * past the largest there can be is 400 VALIDATION_ERROR, as a malformed one is: read before anything
 * is taken or charged (the schema's pattern bounds its digits, not its value).
 */
export function readResume(lastEventId: string | undefined, marketCount: number): MarketResume {
  if (lastEventId === undefined) return { kind: 'none' };
  const [, id, k] = /^m\.([0-9]{1,19})(?:\.([0-9]{1,3}))?$/.exec(lastEventId) ?? [];
  if (id === undefined) return { kind: 'none' }; // the route's schema refuses it first
  if (BigInt(id) > MAX_EVENT_ID) {
    throw validationError([
      { path: 'header.last-event-id', message: `is not an event id: ${id} is past ${MAX_EVENT_ID}` },
    ]);
  }
  if (k !== undefined && Number(k) < marketCount) return { kind: 'snapshot', text: lastEventId };
  return { kind: 'after', id: BigInt(id), text: lastEventId };
}

/**
 * What `GET /stream/markets` sends (docs/streams.md#markets): the process reads the stored events
 * once per notification — one query for every market any of its streams follows — and hands each
 * row to the streams of its market; each stream has read its own snapshot or replay first.
 */
export class MarketFeed {
  private readonly byMarket = new Map<string, Set<MarketSubscriber>>();
  private readonly fanOut: NotificationFanOut;
  private readonly wake: () => void;
  /** The newest id this process has read for every followed market; undefined while not listening. */
  private cursor: bigint | undefined;
  private listening: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Moves when a market is added: a read that began before may have passed over its rows. */
  private version = 0;
  private subscribers = 0;

  /** The market change log's reads, offered by the markets' door. */
  readonly log: MarketLogReader;

  constructor(deps: MarketFeedDeps) {
    this.log = new MarketLogReader(deps.db);
    this.fanOut = new NotificationFanOut(deps.db, this.log.channel, deps.log);
    this.wake = foldedWakes(
      () => this.read(),
      (err) => deps.log.warn({ err }, 'market stream: reading events failed'),
    );
  }

  /** How many markets this process follows now (tests, the benchmark). */
  get marketCount(): number {
    return this.byMarket.size;
  }

  source(ids: string[], resume: MarketResume, requestId: string): StreamSource {
    return new MarketSubscriber(this, ids, resume, requestId);
  }

  /** Adds a stream's markets to what this process reads; resolves once the process is listening. */
  async join(subscriber: MarketSubscriber): Promise<void> {
    for (const id of subscriber.ids) {
      let set = this.byMarket.get(id);
      if (!set) {
        set = new Set();
        this.byMarket.set(id, set);
        this.version += 1;
      }
      set.add(subscriber);
    }
    this.subscribers += 1;
    this.listening ??= this.listen();
    await this.listening;
  }

  leave(subscriber: MarketSubscriber): void {
    let left = false;
    for (const id of subscriber.ids) {
      const set = this.byMarket.get(id);
      if (!set?.delete(subscriber)) continue;
      left = true;
      if (set.size === 0) this.byMarket.delete(id);
    }
    if (!left) return;
    this.subscribers -= 1;
    if (this.subscribers === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      this.listening = undefined;
      this.cursor = undefined;
    }
  }

  private async listen(): Promise<void> {
    try {
      this.unsubscribe = await this.fanOut.subscribe(this.log.topic, this.wake);
      // Read after listening: a row committed in between is both after the cursor and notified.
      this.cursor = await this.log.newest();
    } catch (err) {
      this.listening = undefined;
      throw err;
    }
  }

  /** One read for every followed market, in pages; each row to the streams of its market. */
  private async read(): Promise<void> {
    for (;;) {
      const cursor = this.cursor;
      if (cursor === undefined || this.byMarket.size === 0) return;
      const version = this.version;
      const rows = await this.log.after(cursor, [...this.byMarket.keys()], BATCH);
      for (const row of rows) {
        const subscribers = this.byMarket.get(row.market_id);
        if (!subscribers) continue;
        for (const event of readEvents(row, cursor))
          for (const subscriber of subscribers) subscriber.deliver(event);
      }
      const last = rows.at(-1);
      // A market added while reading was not in the query: read again from the same cursor (the
      // streams skip what they already have).
      if (this.version !== version) continue;
      if (last && this.cursor === cursor) this.cursor = BigInt(last.id);
      if (rows.length < BATCH) return;
    }
  }

  /** A stream's own read of its markets' events after `after` (its replay, its catch-up). */
  readAfter(ids: string[], after: bigint): Promise<EventRow[]> {
    return this.log.after(after, ids, BATCH);
  }
}

/** One open market stream: its snapshot or replay, then the live events of its markets, each once. */
class MarketSubscriber implements StreamSource {
  private sink: StreamSink | undefined;
  /** The newest event id this stream has sent (or that its snapshot holds). */
  private after = 0n;
  private catchingUp = true;
  /** An event arrived while catching up: read again before going live. */
  private missed = false;
  private stopped = false;

  constructor(
    private readonly feed: MarketFeed,
    readonly ids: string[],
    private readonly resume: MarketResume,
    private readonly requestId: string,
  ) {}

  async start(sink: StreamSink): Promise<void> {
    await this.feed.join(this);
    if (this.stopped) return;
    const { resume } = this;
    const replay = resume.kind === 'after' && (await this.kept(resume.id));
    if (replay && resume.kind === 'after') {
      // The replay brings up to date each market that has a `market` event after the resume point;
      // every other one of `ids` (one the earlier subscription may not have had) gets its state first.
      const states = await this.states(resume.id);
      sink.comment(
        `sibyl market stream ${this.requestId}: ${this.ids.join(', ')}; the events after ${resume.text} first` +
          (states.length > 0 ? `, after the state of ${states.map(([, row]) => row.id).join(', ')}` : ''),
      );
      this.after = resume.id;
      for (const [k, row] of states) this.sendState(sink, row, `m.${resume.id}.${k}`);
    } else {
      sink.comment(`sibyl market stream ${this.requestId}: ${this.ids.join(', ')}${this.note()}`);
      await this.snapshot(sink);
    }
    while (!this.stopped) {
      this.missed = false;
      if (!(await this.catchUp(sink))) return;
      if (!this.missed) break;
    }
    this.catchingUp = false;
    this.sink = sink;
  }

  stop(): void {
    this.stopped = true;
    this.sink = undefined;
    this.feed.leave(this);
  }

  /** An event the process read: sent if it is newer than what this stream has (each event once). */
  deliver(event: ReadEvent): void {
    if (this.catchingUp) {
      this.missed = true;
      return;
    }
    const sink = this.sink;
    if (!sink || sink.closed || event.id <= this.after) return;
    this.after = event.id;
    if (event.draft) {
      // The market is no longer one GET /markets/{id} answers: it leaves the stream as if deleted,
      // and the stream ends with the answer a new one would get.
      sink.close({ code: 'NOT_FOUND', message: `Market ${event.marketId} not found` });
      return;
    }
    // The stored data after this stream's `requestId`, as every event carries it first.
    sink.send({ event: event.kind, id: event.eventId, shared: event.data });
  }

  /** Why there is a snapshot, when the client asked to resume. */
  private note(): string {
    const { resume } = this;
    if (resume.kind === 'none') return '';
    return resume.kind === 'snapshot'
      ? `; ${resume.text} is within a snapshot: the snapshot again`
      : `; ${resume.text} is not an event of the last 24 hours: a new snapshot`;
  }

  private async kept(id: bigint): Promise<boolean> {
    return this.feed.log.kept(id);
  }

  /** One `event: market` per market, in the order asked, each with the snapshot's resume point. */
  private async snapshot(sink: StreamSink): Promise<void> {
    const { upTo, byId } = await this.feed.log.states(this.ids);
    this.after = BigInt(upTo);
    this.ids.forEach((id, k) => {
      const row = byId.get(id);
      if (row) this.sendState(sink, row, `m.${upTo}.${k + 1}`);
    });
  }

  /**
   * On a resume after `since`: the state of each market of `ids` (with its position k, from 1) that
   * has no `market` event after `since`, in the order asked. Read in one view with the newest id; a
   * market without a `market` event up to it has not changed since `since`, so its state now is its
   * state at `since`, and `m.<since>.<k>` is a true resume point.
   */
  private async states(since: bigint): Promise<[number, MarketState][]> {
    const { upTo, byId } = await this.feed.log.states(this.ids);
    const changed = await this.feed.log.changedSince(since, upTo, this.ids);
    const states: [number, MarketState][] = [];
    this.ids.forEach((id, k) => {
      const row = byId.get(id);
      if (row && !changed.has(id)) states.push([k + 1, row]);
    });
    return states;
  }

  private sendState(sink: StreamSink, state: MarketState, id: string): void {
    sink.send({ event: 'market', id, data: { requestId: this.requestId, ...state } });
  }

  /** Sends what is stored after `after`, to the end; false once the stream is closed. */
  private async catchUp(sink: StreamSink): Promise<boolean> {
    for (;;) {
      const rows = await this.feed.readAfter(this.ids, this.after);
      for (const row of rows) {
        for (const event of readEvents(row, this.after)) {
          // A long replay waits for the client to take what was sent rather than filling its queue.
          while (sink.backlogBytes > REPLAY_BACKLOG_BYTES && !sink.closed && !this.stopped) await pause(20);
          if (sink.closed || this.stopped) return false;
          this.after = event.id;
          // A DRAFT spell since the resume point, over now (the stream was admitted): never shown.
          if (event.draft) continue;
          sink.send({ event: event.kind, id: event.eventId, shared: event.data });
        }
      }
      if (rows.length < BATCH) return !sink.closed && !this.stopped;
    }
  }
}
