import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type MarketHistory, type MarketItem, type Mode, ok } from '../api';
import { PriceChart } from '../components/Chart';
import { Card, ErrorNote, num, Table } from '../components/ui';
import { grouped, usd, when } from '../format';
import { openStream } from '../stream';
import {
  bucketOf,
  INTERVAL,
  INTERVAL_SECONDS,
  type Series,
  type StreamedTrade,
  seriesOf,
  type Trade,
  withClose,
  withLatestTrades,
  withTrade,
} from './market-series';

/** What the market view needs of a market: the list's item, or the detail read for an address. */
export type MarketSummary = Pick<MarketItem, 'id' | 'title' | 'outcomes'>;
type Outcome = MarketSummary['outcomes'][number];

/** The latest trades the page shows (and reads once, when a market is opened). */
const TRADES = 20;

/**
 * What a read cost. The balance it left is the header's, read again after every billed read (one
 * balance on the screen, not one per read).
 */
export function Cost({ answer }: { answer: { costUsd: string } }) {
  return <p class="note cost">This read cost {usd(answer.costUsd)}.</p>;
}

export const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
/** A price in basis points as a share of 1 (what one share of the outcome costs). */
export const price = (basisPoints: number | null) =>
  basisPoints === null ? '—' : (basisPoints / 10_000).toFixed(4);

/**
 * One market: its outcomes' odds, a chart per outcome, its latest trades. While it is open, the
 * market stream (read with fetch, the session's cookie: dashboard/src/stream.ts) moves the odds, adds each trade to the table
 * and moves its outcome's last point.
 */
export function MarketView({
  mode,
  market,
  onBalanceChange,
}: {
  mode: Mode;
  market: MarketSummary;
  /** After every billed read: the header's balance is read again. */
  onBalanceChange: () => void;
}) {
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
  const [tradesCost, setTradesCost] = useState<{ costUsd: string } | null>(null);
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
        onBalanceChange();
        setHistories(answers);
        setSeries(answers.map(seriesOf));
        for (const trade of early.current.splice(0)) mergeTrade(trade);
        const page = await ok(
          api.GET('/dashboard/api/{mode}/markets/{id}/trades', {
            params: { path, query: { limit: TRADES } },
          }),
        );
        onBalanceChange();
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
      onBalanceChange();
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
          onBalanceChange();
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
    <Card title={market.title} class="market-view">
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
          {usd(histories[0].costUsd)} each.
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
      <Table
        label="Trades"
        columns={['Time', 'Outcome', num('Price'), num('Shares (units)'), num('Value (SOL)')]}
      >
        {trades.map((t) => (
          <tr key={t.tradeId} data-trade={t.tradeId}>
            <td>{when(t.at)}</td>
            <td>{market.outcomes[t.outcome]?.label ?? t.outcome}</td>
            <td class="num">{price(t.price)}</td>
            <td class="num">{grouped(t.shares)}</td>
            <td class="num">{t.valueSol.toFixed(6)}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}
