import type { AccountMode } from '../accounts/index.js';
import { AppError } from '../errors.js';
import type { StreamSink, StreamSource } from '../http/event-stream/stream.js';
import { SharedData } from '../http/event-stream/wire.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { type PriceService, type PriceTarget, presentPrice } from '../prices/index.js';

type PriceResult = Awaited<ReturnType<PriceService['price']>>;

/** A token a stream asked for: how its events name it, and what is priced. */
export interface StreamedToken {
  symbol: string;
  target: PriceTarget;
}

/** What a symbol's topic last computed: a price, or why there is none right now. */
type Reading =
  | { kind: 'price'; result: PriceResult; at: Date }
  | { kind: 'unavailable'; code: string; message: string; at: Date };

/**
 * A stream whose client falls behind this much (bytes written, not yet taken by the network) is sent
 * nothing new for a while: when it catches up it gets each symbol's newest price, never the ones in
 * between (the mechanism ends it if it stays behind).
 */
const COALESCE_BYTES = 64 * 1024;

/**
 * One symbol in one mode (sandbox or live) that some streams of this process subscribe to: its VWAP
 * is computed once per interval, whatever the number of subscribers, and each change is fanned out.
 */
class PriceTopic {
  readonly subscribers = new Set<PriceSubscriber>();
  reading: Reading | undefined;
  /** Moves on each change of the reading: a subscriber sends a symbol when its version is behind. */
  version = 0;
  private computing: Promise<void> | undefined;
  /**
   * Its own interval: the topics of a process tick apart, so that each tick's fan-out is one
   * symbol's (a burst of every symbol's events at once would delay the last of them).
   */
  private timer: NodeJS.Timeout | undefined;
  /** The reading's event data, serialised once per label (symbol or mint, as streams asked) and version. */
  private readonly shared = new Map<string, SharedData>();

  constructor(
    readonly key: string,
    private readonly mode: AccountMode,
    private readonly target: PriceTarget,
    private readonly deps: PriceFeedDeps,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      void this.refresh();
    }, this.deps.intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The current reading's data for streams that name the token `token.symbol`: built once, shared. */
  data(token: StreamedToken): SharedData | undefined {
    const reading = this.reading;
    if (!reading) return undefined;
    let data = this.shared.get(token.symbol);
    if (data) return data;
    const { symbol } = token;
    data = new SharedData(
      JSON.stringify(
        reading.kind === 'price'
          ? {
              symbol,
              ...presentPrice(reading.result, token.target),
              resolutionTimestamp: reading.at.toISOString(),
            }
          : { symbol, error: { code: reading.code, message: reading.message }, at: reading.at.toISOString() },
      ),
    );
    this.shared.set(symbol, data);
    return data;
  }

  /** The current reading, computing it if there is none yet (coalesced with a computation under way). */
  async current(): Promise<void> {
    if (this.reading) return;
    await this.refresh();
  }

  /** One computation at a time; a tick that finds one under way is skipped. */
  refresh(): Promise<void> {
    this.computing ??= this.compute().finally(() => {
      this.computing = undefined;
    });
    return this.computing;
  }

  private async compute(): Promise<void> {
    const at = this.deps.clock.now();
    let reading: Reading;
    try {
      const result = await this.deps.prices.price(
        this.target,
        this.mode,
        this.target.token?.symbol ?? this.target.key,
      );
      reading = { kind: 'price', result, at };
    } catch (err) {
      if (!(err instanceof AppError)) {
        this.deps.log.warn({ err }, 'price stream: computing a price failed');
      }
      const code = err instanceof AppError ? err.code : 'PRICE_UNAVAILABLE';
      const message = err instanceof AppError ? err.message : 'No price right now; retry shortly';
      reading = { kind: 'unavailable', code, message, at };
    }
    if (changed(this.reading, reading)) {
      this.reading = reading;
      this.version += 1;
      this.shared.clear();
    }
    for (const subscriber of this.subscribers) subscriber.deliver(this);
  }
}

function changed(before: Reading | undefined, now: Reading): boolean {
  if (!before || before.kind !== now.kind) return true;
  if (before.kind === 'unavailable' && now.kind === 'unavailable') return before.code !== now.code;
  if (before.kind === 'price' && now.kind === 'price')
    return before.result.vwapPrice !== now.result.vwapPrice || before.result.isValid !== now.result.isValid;
  return true;
}

export interface PriceFeedDeps {
  prices: PriceService;
  clock: Clock;
  log: Log;
  intervalMs: number;
  /** Distinct mints outside the registry without a price that one account's live streams may follow. */
  unpricedPerAccount: number;
}

/** Whose stream: its account, whose streams share the bound on unpriced mints, and its mode. */
export interface PriceStreamOwner {
  accountId: string;
  mode: AccountMode;
}

/**
 * What `GET /stream/prices` sends (docs/streams.md#prices): one topic per subscribed symbol and
 * mode in this process, each computed once per interval and fanned out to its streams.
 */
export class PriceFeed {
  private readonly topics = new Map<string, PriceTopic>();
  /** Each account's open price streams in this process. */
  private readonly byAccount = new Map<string, Set<PriceSubscriber>>();

  constructor(private readonly deps: PriceFeedDeps) {}

  /** How many symbols this process computes now (for tests and metrics). */
  get topicCount(): number {
    return this.topics.size;
  }

  /**
   * One stream's source: its symbols' topics are joined now (their first computation starts), and
   * the snapshot is sent when the stream starts. `resumedAfter`: the client's `Last-Event-ID` — a
   * price stream resumes with the current prices, which is all it missed that still holds. Throws
   * 429 STREAM_LIMIT_EXCEEDED when the account's streams would follow too many unpriced mints.
   */
  source(owner: PriceStreamOwner, tokens: StreamedToken[], resumedAfter: string | undefined): StreamSource {
    const { mode } = owner;
    this.admitUnpriced(owner, tokens);
    const subscriber = new PriceSubscriber(tokens, resumedAfter);
    const streams = this.byAccount.get(owner.accountId) ?? new Set<PriceSubscriber>();
    this.byAccount.set(owner.accountId, streams);
    streams.add(subscriber);
    const joined: PriceTopic[] = [];
    for (const token of tokens) {
      const key = `${mode}\u0000${token.target.key}`;
      let topic = this.topics.get(key);
      if (!topic) {
        topic = new PriceTopic(key, mode, token.target, this.deps);
        this.topics.set(key, topic);
        topic.start();
        void topic.current();
      }
      topic.subscribers.add(subscriber);
      subscriber.labels.set(topic, token);
      joined.push(topic);
    }
    subscriber.leave = () => {
      streams.delete(subscriber);
      if (streams.size === 0 && this.byAccount.get(owner.accountId) === streams) {
        this.byAccount.delete(owner.accountId);
      }
      for (const topic of joined) {
        topic.subscribers.delete(subscriber);
        if (topic.subscribers.size === 0 && this.topics.get(topic.key) === topic) {
          topic.stop();
          this.topics.delete(topic.key);
        }
      }
    };
    return subscriber;
  }

  /**
   * Any well-formed mint is a topic, and a topic asks the venues every interval: what one account's
   * streams make the venues look up is bounded by the mints outside the registry they follow that
   * have no price now — a new one, or one no venue knows (docs/streams.md#mints-without-a-price).
   * Mints that price are real tokens, and listed tokens are the registry's few: neither counts.
   * Sandbox streams never reach a venue. Checked and joined without a pause between, so two streams
   * opening at once cannot both pass.
   */
  private admitUnpriced(owner: PriceStreamOwner, tokens: StreamedToken[]): void {
    if (owner.mode !== 'live') return;
    const unpriced = new Set<string>();
    const count = (key: string, target: PriceTarget) => {
      if (target.token === null && this.topics.get(key)?.reading?.kind !== 'price') unpriced.add(key);
    };
    for (const stream of this.byAccount.get(owner.accountId) ?? [])
      for (const [topic, token] of stream.labels) count(topic.key, token.target);
    const open = unpriced.size;
    for (const token of tokens) count(`${owner.mode}\u0000${token.target.key}`, token.target);
    const max = this.deps.unpricedPerAccount;
    if (unpriced.size <= max) return;
    throw new AppError(
      'STREAM_LIMIT_EXCEEDED',
      `This account's price streams would follow ${unpriced.size} mints outside the token registry that ` +
        `have no price (at most ${max}); close a stream, or stream fewer such mints`,
      { details: { limit: 'unpricedPerAccount', max, open } },
    );
  }

  /** Stops every topic (the app is closing). */
  close(): void {
    for (const topic of this.topics.values()) topic.stop();
    this.topics.clear();
  }
}

/** One open price stream: the symbols it asked for, and which version of each it has sent. */
class PriceSubscriber implements StreamSource {
  /** How this stream names each topic's symbol (as it asked: symbol upper-cased, or the mint). */
  readonly labels = new Map<PriceTopic, StreamedToken>();
  private readonly sent = new Map<PriceTopic, number>();
  private sink: StreamSink | undefined;
  private sequence = 0;
  leave: () => void = () => {};

  constructor(
    private readonly tokens: StreamedToken[],
    private readonly resumedAfter: string | undefined,
  ) {}

  async start(sink: StreamSink): Promise<void> {
    const symbols = this.tokens.map((token) => token.symbol).join(', ');
    sink.comment(
      `sibyl price stream ${sink.requestId}: ${symbols}` +
        (this.resumedAfter ? `; resumed after ${this.resumedAfter} with the current prices` : ''),
    );
    // The snapshot, in the order asked: each symbol's reading once it has one.
    for (const topic of this.labels.keys()) {
      await topic.current();
      if (sink.closed) return;
      this.send(sink, topic);
    }
    this.sink = sink;
  }

  stop(): void {
    this.sink = undefined;
    this.leave();
  }

  /** A topic's reading changed (or its tick came round): send it if this stream is behind on it. */
  deliver(topic: PriceTopic): void {
    const sink = this.sink;
    if (!sink || sink.closed) return;
    if (this.sent.get(topic) === topic.version) return;
    if (sink.backlogBytes > COALESCE_BYTES) return; // the next tick sends the newest
    this.send(sink, topic);
  }

  /** The topic's shared data after this stream's requestId: no serialisation per stream. */
  private send(sink: StreamSink, topic: PriceTopic): void {
    const token = this.labels.get(topic);
    const reading = topic.reading;
    const shared = token && topic.data(token);
    if (!reading || !shared) return;
    this.sent.set(topic, topic.version);
    this.sequence += 1;
    sink.send({
      event: reading.kind,
      id: `p.${reading.at.getTime()}.${this.sequence}`,
      shared,
    });
  }
}
