import { useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  type MarketHistory,
  type MarketItem,
  type MarketList,
  type MarketTrade,
  type Mode,
  ok,
} from '../api';
import { PriceChart } from '../components/Chart';
import { Card, ErrorNote, num, Table } from '../components/ui';
import { useData } from '../data';
import { usd, when } from '../format';
import { openStream } from '../stream';

/**
 * Markets: a search box, a sort, the list, and one market's chart per outcome and latest trades,
 * kept live by the market stream (docs/dashboard.md#market-data). The page a builder copies from:
 * every read is a plain call of the API's route (here its dashboard twin, with the session), and
 * every read is priced — the page shows what each cost.
 */

type SortKey = 'createdAt' | 'closesAt' | 'volume' | 'volume24h' | 'liquidity' | 'bettors' | 'relevance';
const SORTS: { value: SortKey; label: string }[] = [
  { value: 'createdAt', label: 'Newest' },
  { value: 'closesAt', label: 'Closing soon' },
  { value: 'volume', label: 'Volume' },
  { value: 'volume24h', label: 'Volume, 24 h' },
  { value: 'liquidity', label: 'Liquidity' },
  { value: 'bettors', label: 'Bettors' },
  { value: 'relevance', label: 'Relevance' },
];
/** Each sort key's own default order (docs/markets.md#search-and-sort). */
const defaultOrder = (sort: SortKey) => (sort === 'closesAt' ? 'asc' : 'desc');
/** One point per 15 minutes: the last ten days at most, and a few days of demo trading drawn finely. */
const INTERVAL = '15m';
const INTERVAL_SECONDS = 15 * 60;
/** The latest trades the page shows (and reads once, when a market is opened). */
const TRADES = 20;

function listMarkets(mode: Mode, query: { q?: string; sort?: SortKey; order?: 'asc' | 'desc' }) {
  return ok(
    api.GET('/dashboard/api/{mode}/markets', {
      params: { path: { mode }, query: { ...query, pageSize: 20 } },
    }),
  );
}

export function Markets({ mode }: { mode: Mode }) {
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const [sort, setSort] = useState<SortKey>('volume');
  const [order, setOrder] = useState<'asc' | 'desc'>('desc');
  const [open, setOpen] = useState<MarketItem | null>(null);
  const list = useData(() => listMarkets(mode, { ...(q ? { q } : {}), sort, order }), [mode, q, sort, order]);
  return (
    <>
      <Card title="Markets">
        <form
          class="filters"
          onSubmit={(event) => {
            event.preventDefault();
            setQ(search.trim());
          }}
        >
          <label>
            Search <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          </label>
          <button type="submit">Search</button>
          <label>
            Sort{' '}
            <select
              value={sort}
              onChange={(e) => {
                const next = e.currentTarget.value as SortKey;
                setSort(next);
                setOrder(defaultOrder(next));
              }}
            >
              {SORTS.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Order{' '}
            <select value={order} onChange={(e) => setOrder(e.currentTarget.value as 'asc' | 'desc')}>
              <option value="desc">Descending</option>
              <option value="asc">Ascending</option>
            </select>
          </label>
        </form>
        <ErrorNote error={list.error} />
        {list.data && <MarketTable page={list.data} onOpen={setOpen} />}
      </Card>
      {open && <MarketView key={`${mode}:${open.id}`} mode={mode} market={open} />}
    </>
  );
}

/** What a read cost, and the balance it left: reads are priced, and the page says so. */
function Cost({ answer }: { answer: { costUsd: string; remainingBalanceUsd: string } }) {
  return (
    <p class="note cost">
      This read cost {usd(answer.costUsd)}; balance {usd(answer.remainingBalanceUsd)}.
    </p>
  );
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
/** A price in basis points as a share of 1 (what one share of the outcome costs). */
const price = (basisPoints: number | null) =>
  basisPoints === null ? '—' : (basisPoints / 10_000).toFixed(4);

function MarketTable({ page, onOpen }: { page: MarketList; onOpen: (market: MarketItem) => void }) {
  return (
    <>
      <Cost answer={page} />
      <Table
        label="Markets"
        columns={['Market', 'Status', 'Outcomes: probability (last price)', num('Volume'), num('24 h')]}
      >
        {page.markets.map((market) => (
          <tr key={market.id} data-market={market.id}>
            <td>
              <button type="button" class="link" onClick={() => onOpen(market)}>
                {market.title}
              </button>
            </td>
            <td>{market.status}</td>
            <td>
              {market.outcomes
                .map((o) => `${o.label} ${percent(o.probability)} (${price(o.lastPrice)})`)
                .join(' · ')}
            </td>
            <td class="num">{market.volumeUsd === null ? '—' : usd(market.volumeUsd.toFixed(2))}</td>
            <td class="num">{market.volume24hUsd === null ? '—' : usd(market.volume24hUsd.toFixed(2))}</td>
          </tr>
        ))}
      </Table>
      {page.markets.length === 0 && <p>No market matches.</p>}
    </>
  );
}

interface Outcome {
  index: number;
  label: string;
  lastPrice: number | null;
  probability: number;
}
/** What the page takes of a trade the stream brings. */
type StreamedTrade = { outcome: number; price: number; at: string };
/** A trade as the table shows it: the API's, or one the stream brought (without its USD value). */
type Trade = Pick<MarketTrade, 'tradeId' | 'outcome' | 'price' | 'shares' | 'at' | 'valueSol'>;
/**
 * An outcome's chart: per bucket (seconds) its close, how many trades it holds, and when its close
 * trade was, when the page knows it (a trade the stream brought, or the outcome's newest trade in the
 * trades the page read; null otherwise); and `historyUntil` (ms), when known: no trade the history
 * holds is later, so a trade after it closes its bucket.
 */
interface Series {
  times: number[];
  closes: number[];
  counts: number[];
  closeAt: (number | null)[];
  historyUntil: number | null;
}
const seriesOf = (h: MarketHistory): Series => ({
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
function withLatestTrades(s: Series, outcome: number, latest: readonly Trade[], limit: number): Series {
  const newest = latest.find((t) => t.outcome === outcome);
  if (newest) {
    const merged = withTrade({ ...s, historyUntil: Number.NEGATIVE_INFINITY }, newest);
    return merged === 'read' ? s : { ...merged, historyUntil: Date.parse(newest.at) };
  }
  const oldest = latest.at(-1);
  if (latest.length < limit || !oldest) return { ...s, historyUntil: Number.NEGATIVE_INFINITY };
  return { ...s, historyUntil: Date.parse(oldest.at) };
}

/**
 * One market: its outcomes' odds, a chart per outcome, its latest trades. While it is open, the
 * market stream (read with fetch, the session's cookie: dashboard/src/stream.ts) moves the odds, adds each trade to the table
 * and moves its outcome's last point.
 */
function MarketView({ mode, market }: { mode: Mode; market: MarketItem }) {
  const [outcomes, setOutcomes] = useState<Outcome[]>(market.outcomes);
  const [series, setSeriesState] = useState<Series[]>([]);
  // The charts as last set, for the stream's handler (which merges each trade into them).
  const current = useRef<Series[]>([]);
  const setSeries = (next: Series[]) => {
    current.current = next;
    setSeriesState(next);
  };
  // Trades the stream brought before the charts were drawn, whose histories may have been read
  // before them: merged once the charts are drawn.
  const early = useRef<StreamedTrade[]>([]);
  const [histories, setHistories] = useState<MarketHistory[]>([]);
  const [trades, setTrades] = useState<Trade[]>([]);
  const [tradesCost, setTradesCost] = useState<{ costUsd: string; remainingBalanceUsd: string } | null>(null);
  const [live, setLive] = useState<string>('connecting…');
  const [error, setError] = useState<unknown>(null);

  // The charts: one history per outcome, its candles' close; then the latest trades, which also
  // say when each outcome's last close was (withLatestTrades): read after the histories, so that
  // they hold every trade the histories do.
  useEffect(() => {
    const path = { mode, id: market.id };
    early.current = [];
    Promise.all(
      market.outcomes.map((o) =>
        ok(
          api.GET('/dashboard/api/{mode}/markets/{id}/history', {
            params: { path, query: { outcome: o.index, interval: INTERVAL } },
          }),
        ),
      ),
    )
      .then(async (answers) => {
        setHistories(answers);
        setSeries(answers.map(seriesOf));
        for (const trade of early.current.splice(0)) mergeTrade(trade);
        const page = await ok(
          api.GET('/dashboard/api/{mode}/markets/{id}/trades', {
            params: { path, query: { limit: TRADES } },
          }),
        );
        setTrades(page.trades);
        setTradesCost(page);
        setSeries(
          current.current.map((s, i) =>
            withLatestTrades(s, market.outcomes[i]?.index ?? i, page.trades, TRADES),
          ),
        );
      })
      .catch(setError);
  }, [mode, market.id]);

  /**
   * A trade into its outcome's chart, in its own bucket (withTrade). A trade in a bucket of the
   * history that already had trades may or may not be its last (`at` decides, not arrival): later
   * than every trade of the history (the page knows when the outcome's newest was from the latest
   * trades it read), it is the close; else, when the page does not know when that bucket's close
   * was (a late trade), that one bucket's history is read again and its close is what the route says.
   * Before the charts are drawn, the trade waits for them (`early`): the histories on their way may
   * have been read before it.
   */
  const mergeTrade = (trade: StreamedTrade) => {
    if (current.current.length === 0) {
      early.current.push(trade);
      return;
    }
    const s = current.current[trade.outcome];
    if (!s) return;
    const merged = withTrade(s, trade);
    if (merged !== 'read')
      return setSeries(current.current.map((old, i) => (i === trade.outcome ? merged : old)));
    readBucket(trade.outcome, bucketOf(trade.at));
  };
  /** Bucket `start` of the outcome read again: its close and trade count as the history route says. */
  const readBucket = (outcome: number, start: number) => {
    const replace = (next: Series) =>
      setSeries(current.current.map((old, i) => (i === outcome ? next : old)));
    ok(
      api.GET('/dashboard/api/{mode}/markets/{id}/history', {
        params: {
          path: { mode, id: market.id },
          query: {
            outcome,
            interval: INTERVAL,
            startTime: new Date(start * 1000).toISOString(),
            endTime: new Date((start + INTERVAL_SECONDS) * 1000).toISOString(),
          },
        },
      }),
    ).then((answer) => {
      const candle = answer.candles.find((c) => Date.parse(c.time) / 1000 === start);
      const now = current.current[outcome];
      if (candle && now) replace(withClose(now, start, candle.close / 10_000, candle.trades, null));
      setHistories((all) => [...all, answer]);
    }, setError);
  };

  // The stream: odds, trades and the charts, live.
  useEffect(() => {
    // Read with fetch, not EventSource: a refused stream (402, 403, 429) then says why (stream.ts).
    const close = openStream(`/dashboard/api/${mode}/stream/markets?ids=${encodeURIComponent(market.id)}`, {
      onEvent(type, data) {
        if (type === 'stream') {
          const { minuteUsd } = JSON.parse(data) as { minuteUsd: string };
          setLive(`live, ${minuteUsd} USD a minute while this market is open`);
        } else if (type === 'market') {
          setOutcomes((JSON.parse(data) as { outcomes: Outcome[] }).outcomes);
        } else if (type === 'trade') {
          const trade = JSON.parse(data) as Omit<Trade, 'valueSol'>;
          const lamports = (BigInt(trade.shares) * BigInt(trade.price)) / 10_000n;
          setTrades((shown) =>
            shown.some((t) => t.tradeId === trade.tradeId)
              ? shown
              : [{ ...trade, valueSol: Number(lamports) / 1e9 }, ...shown].slice(0, TRADES),
          );
          mergeTrade(trade);
        } else if (type === 'error') {
          // The server's own `event: error` ({ code }): the stream ends there.
          setLive(`stopped: ${(JSON.parse(data) as { code: string }).code}`);
          close();
        }
      },
      onRefused(refusal) {
        const limit = refusal.details?.limit;
        setLive(
          `refused: ${refusal.status} ${refusal.code}${typeof limit === 'string' ? ` (${limit})` : ''} — ${refusal.message}`,
        );
      },
      onRetry() {
        setLive('reconnecting…');
      },
    });
    return close;
  }, [mode, market.id]);

  return (
    <Card title={market.title}>
      <p class="note" role="status">
        Updates: <span class="live">{live}</span>
      </p>
      <ErrorNote error={error} />
      <Table label="Outcomes" columns={['Outcome', num('Probability'), num('Last price')]}>
        {outcomes.map((o) => (
          <tr key={o.index}>
            <td>{o.label}</td>
            <td class="num">{percent(o.probability)}</td>
            <td class="num">{price(o.lastPrice)}</td>
          </tr>
        ))}
      </Table>
      {histories[0] && (
        <p class="note cost">
          Price per {INTERVAL} (the candles' close): {histories.length} history reads at{' '}
          {usd(histories[0].costUsd)} each; balance {usd(histories.at(-1)?.remainingBalanceUsd ?? '0')}.
        </p>
      )}
      {series.map((s, i) => (
        <figure key={market.outcomes[i]?.index ?? i} class="outcome-chart" data-outcome={i}>
          <figcaption>{market.outcomes[i]?.label}</figcaption>
          {s.times.length > 0 ? (
            <PriceChart label={market.outcomes[i]?.label ?? String(i)} times={s.times} closes={s.closes} />
          ) : (
            <p>No trade yet.</p>
          )}
        </figure>
      ))}
      <h3>Latest trades</h3>
      {tradesCost && <Cost answer={tradesCost} />}
      <Table label="Trades" columns={['Time', 'Outcome', num('Price'), num('Shares'), num('Value (SOL)')]}>
        {trades.map((t) => (
          <tr key={t.tradeId} data-trade={t.tradeId}>
            <td>{when(t.at)}</td>
            <td>{market.outcomes[t.outcome]?.label ?? t.outcome}</td>
            <td class="num">{price(t.price)}</td>
            <td class="num">{t.shares}</td>
            <td class="num">{t.valueSol.toFixed(6)}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

const bucketOf = (at: string) => Math.floor(Date.parse(at) / 1000 / INTERVAL_SECONDS) * INTERVAL_SECONDS;

/**
 * The series with bucket `time` closing at `close` (`count` trades, its close trade at `closeAt`):
 * the buckets after it that hold no trade carry its close, as the history route draws them.
 */
function withClose(s: Series, time: number, close: number, count: number, closeAt: number | null): Series {
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
function withTrade(s: Series, trade: { price: number; at: string }): Series | 'read' {
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
