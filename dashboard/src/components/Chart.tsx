import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { UsageRow } from '../api';

/** The chart fills its card, down to a phone's narrowest. */
const widthOf = (element: HTMLElement) => Math.max(200, element.clientWidth);

/** Spend (bars) and paid requests (line) per day, drawn by uPlot. */
export function UsageChart({ rows }: { rows: UsageRow[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const days = rows.map((row) => Date.parse(`${row.group}T00:00:00Z`) / 1000);
    const spend = rows.map((row) => Number(row.spendUsd));
    const requests = rows.map((row) => row.requests);
    const chart = new uPlot(
      {
        width: widthOf(element),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, usd: { auto: true }, n: { auto: true } },
        axes: [
          {},
          {
            scale: 'usd',
            label: 'Spend (USD)',
            size: 76,
            values: (_u, ticks) => ticks.map((t) => `$${t.toFixed(2)}`),
          },
          { scale: 'n', side: 1, label: 'Requests', size: 60, grid: { show: false } },
        ],
        series: [
          {},
          {
            label: 'Spend (USD)',
            scale: 'usd',
            stroke: '#5b4bdb',
            fill: 'rgba(91, 75, 219, 0.25)',
            paths: uPlot.paths.bars?.({ size: [0.6, 40] }),
            value: (_u, v) => (v === null ? '—' : `$${v.toFixed(2)}`),
          },
          { label: 'Requests', scale: 'n', stroke: '#1f9d74', width: 2 },
        ],
      },
      [days, spend, requests],
      element,
    );
    // The card's width follows the window (a phone turned, a sidebar folded): so does the chart.
    const resize = new ResizeObserver(() => chart.setSize({ width: widthOf(element), height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [rows]);
  return <div class="chart" ref={box} role="img" aria-label="Spend and requests per day" />;
}

/**
 * One outcome's price (the candles' close, 0–1) over time, drawn by uPlot. The chart is made once
 * per outcome and given new data as it comes (a live trade moves its last point), so it does not
 * flicker; `data-points`, `data-last` and `data-closes` say how many points uPlot holds, its last
 * value and every value (the browser test reads them).
 */
export function PriceChart({ label, times, closes }: { label: string; times: number[]; closes: number[] }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const made = new uPlot(
      {
        width: widthOf(element),
        height: 180,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: [0, 1] } },
        axes: [{}, { size: 50, values: (_u, ticks) => ticks.map((t) => t.toFixed(2)) }],
        series: [
          {},
          { label, stroke: '#5b4bdb', width: 2, value: (_u, v) => (v === null ? '—' : v.toFixed(4)) },
        ],
      },
      [[], []],
      element,
    );
    chart.current = made;
    const resize = new ResizeObserver(() => made.setSize({ width: widthOf(element), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      chart.current = null;
    };
  }, [label]);
  useEffect(() => {
    const made = chart.current;
    const element = box.current;
    if (!made || !element) return;
    made.setData([times, closes]);
    element.dataset.points = String(made.data[0]?.length ?? 0);
    element.dataset.last = String(made.data[1]?.at(-1) ?? '');
    element.dataset.closes = (made.data[1] ?? []).join(',');
  }, [times, closes, label]);
  return <div class="chart" ref={box} role="img" aria-label={`Price of ${label} over time`} />;
}
