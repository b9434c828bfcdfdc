import type { MarketHistory, MarketTrade } from '../api';

/**
 * A market's chart per outcome, and how a trade the stream brings moves it as the history route
 * would draw it (docs/dashboard.md#pages, Markets): the page's pure part, apart from its reads.
 */

/** One point per 15 minutes: the last ten days at most, and a few days of demo trading drawn finely. */
export const INTERVAL = '15m';
export const INTERVAL_SECONDS = 15 * 60;

/** What the page takes of a trade the stream brings. */
export type StreamedTrade = { outcome: number; price: number; at: string };
/** A trade as the table shows it: the API's, or one the stream brought (without its USD value). */
export type Trade = Pick<MarketTrade, 'tradeId' | 'outcome' | 'price' | 'shares' | 'at' | 'valueSol'>;

/**
 * An outcome's chart: per bucket (seconds) its close, how many trades it holds, and when its close
 * trade was, when the page knows it (a trade the stream brought, or the outcome's newest trade in the
 * trades the page read; null otherwise); and `historyUntil` (ms), when known: no trade the history
 * holds is later, so a trade after it closes its bucket.
 */
export interface Series {
  times: number[];
  closes: number[];
  counts: number[];
  closeAt: (number | null)[];
  historyUntil: number | null;
}
export const seriesOf = (h: MarketHistory): Series => ({
  times: h.candles.map((c) => Date.parse(c.time) / 1000),
  closes: h.candles.map((c) => c.close / 10_000),
  counts: h.candles.map((c) => c.trades),
  closeAt: h.candles.map(() => null),
  historyUntil: null,
});

/**
 * An outcome's series with what the market's latest trades (read after its history, newest first:
 * `limit` asked) say of it. The outcome's newest trade among them is its newest of all, so the
 * close of its bucket (merged as the stream's trades are), and no trade of the history is later;
 * none of it in a full page: all its trades are before the page's oldest; none in a shorter page:
 * it had no trade.
 */
export function withLatestTrades(
  s: Series,
  outcome: number,
  latest: readonly Trade[],
  limit: number,
): Series {
  const newest = latest.find((t) => t.outcome === outcome);
  if (newest) {
    const merged = withTrade({ ...s, historyUntil: Number.NEGATIVE_INFINITY }, newest);
    return merged === 'read' ? s : { ...merged, historyUntil: Date.parse(newest.at) };
  }
  const oldest = latest.at(-1);
  if (latest.length < limit || !oldest) return { ...s, historyUntil: Number.NEGATIVE_INFINITY };
  return { ...s, historyUntil: Date.parse(oldest.at) };
}

export const bucketOf = (at: string) =>
  Math.floor(Date.parse(at) / 1000 / INTERVAL_SECONDS) * INTERVAL_SECONDS;

/**
 * The series with bucket `time` closing at `close` (`count` trades, its close trade at `closeAt`):
 * the buckets after it that hold no trade carry its close, as the history route draws them.
 */
export function withClose(
  s: Series,
  time: number,
  close: number,
  count: number,
  closeAt: number | null,
): Series {
  const i = s.times.indexOf(time);
  if (i < 0) return s;
  const closes = [...s.closes];
  const counts = [...s.counts];
  const closeAts = [...s.closeAt];
  closes[i] = close;
  counts[i] = count;
  closeAts[i] = closeAt;
  for (let j = i + 1; j < closes.length && counts[j] === 0; j++) closes[j] = close;
  return { times: s.times, closes, counts, closeAt: closeAts, historyUntil: s.historyUntil };
}

/**
 * A series with one more trade, in its own bucket (as the history route would draw it): in a later
 * bucket, new points (flat between); before the first, new points from its bucket (flat up to the
 * first); in a bucket without trades, it is the close; in a bucket whose close trade the page knows,
 * the close if it is later; in a bucket of the history that had trades, the close if it is later than
 * every trade of the history (`historyUntil`), else 'read' (whether it is the bucket's last, only the
 * route knows).
 */
export function withTrade(s: Series, trade: { price: number; at: string }): Series | 'read' {
  const bucket = bucketOf(trade.at);
  const at = Date.parse(trade.at);
  const close = trade.price / 10_000;
  const first = s.times[0];
  const last = s.times.at(-1);
  if (first === undefined || last === undefined)
    return { times: [bucket], closes: [close], counts: [1], closeAt: [at], historyUntil: s.historyUntil };
  if (bucket < first) {
    const times: number[] = [];
    for (let t = bucket; t < first; t += INTERVAL_SECONDS) times.push(t);
    return {
      times: [...times, ...s.times],
      closes: [...times.map(() => close), ...s.closes],
      counts: [...times.map((t) => (t === bucket ? 1 : 0)), ...s.counts],
      closeAt: [...times.map((t) => (t === bucket ? at : null)), ...s.closeAt],
      historyUntil: s.historyUntil,
    };
  }
  if (bucket > last) {
    const times = [...s.times];
    const closes = [...s.closes];
    const counts = [...s.counts];
    const closeAt = [...s.closeAt];
    // Buckets without trades in between are flat at the previous close, as the route draws them.
    for (let t = last + INTERVAL_SECONDS; t < bucket; t += INTERVAL_SECONDS) {
      times.push(t);
      closes.push(closes.at(-1) as number);
      counts.push(0);
      closeAt.push(null);
    }
    times.push(bucket);
    closes.push(close);
    counts.push(1);
    closeAt.push(at);
    return { times, closes, counts, closeAt, historyUntil: s.historyUntil };
  }
  const i = s.times.indexOf(bucket);
  const count = (s.counts[i] ?? 0) + 1;
  const known = s.closeAt[i] ?? null;
  if (s.counts[i] === 0 || (known !== null && at >= known)) return withClose(s, bucket, close, count, at);
  if (known !== null) return withClose(s, bucket, s.closes[i] as number, count, known);
  // A bucket of the history whose close trade's time is not known here: a trade later than every
  // trade of the history is its close; otherwise, arriving last does not make it the latest.
  if (s.historyUntil !== null && at > s.historyUntil) return withClose(s, bucket, close, count, at);
  return 'read';
}
