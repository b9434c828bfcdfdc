import { followEventStream, shown } from '../lib/event-stream-client.js';

export interface WatchOptions {
  apiUrl: string;
  apiKey: string;
  symbols: string[];
  signal: AbortSignal;
  /** A terminal: the table is redrawn in place; otherwise one plain line per event. */
  terminal: boolean;
  print(line: string): void;
  /** Wait before reconnecting; default 2 s. */
  reconnectMs?: number;
}

interface Row {
  price: string;
  valid: boolean;
  sources: number;
  spread: string;
  at: string;
  note: string;
}

/**
 * `sibyl stream prices SOL JUP` (docs/streams.md#in-a-terminal): follows `GET /stream/prices` with
 * the command line's event-stream client (reconnecting with `Last-Event-ID`, saying where it tried)
 * and shows each symbol's latest VWAP: a table redrawn in place on a terminal, one line per event
 * otherwise (a pipe, a file). A refusal that reconnecting cannot mend (a 4xx, or the stream ended by
 * INSUFFICIENT_BALANCE) stops it with the service's error.
 */
export async function watchPrices(options: WatchOptions): Promise<void> {
  const url = new URL('/api/v1/stream/prices', options.apiUrl);
  url.searchParams.set('symbols', options.symbols.join(','));
  const state: State = { drawn: 0, rows: new Map<string, Row>() };
  const print = (line: string) => {
    options.print(line);
    // A line of its own moved the cursor: the table is drawn again below it.
    state.drawn = 0;
  };
  await followEventStream({
    url: url.toString(),
    apiKey: options.apiKey,
    signal: options.signal,
    ...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),
    print,
    fatal: FATAL_END,
    event: (message) => {
      const data = JSON.parse(message.data) as Record<string, unknown>;
      if (message.event === 'stream') {
        if (!options.terminal || state.drawn === 0)
          print(
            `streaming ${options.symbols.join(', ')} from ${shown(url.toString())} (${String(data.minuteUsd)} USD per started minute)`,
          );
      } else if (message.event === 'price' || message.event === 'unavailable') {
        show(options, state, message.event, data);
      }
    },
  });
}

type State = { drawn: number; rows: Map<string, Row> };

const FATAL_END = new Set(['INSUFFICIENT_BALANCE', 'QUOTA_EXCEEDED']);

function show(options: WatchOptions, state: State, kind: string, data: Record<string, unknown>): void {
  const symbol = String(data.symbol);
  const row: Row =
    kind === 'price'
      ? {
          price: String(data.vwapPrice),
          valid: data.isValid === true,
          sources: Number(data.sourceCount),
          spread: typeof data.spread === 'number' ? `${(data.spread * 100).toFixed(3)}%` : '',
          at: String(data.resolutionTimestamp),
          note: data.isValid === true ? '' : 'not valid',
        }
      : {
          price: '',
          valid: false,
          sources: 0,
          spread: '',
          at: String(data.at),
          note: `unavailable (${String((data.error as { code?: string } | undefined)?.code)})`,
        };
  state.rows.set(symbol, row);
  if (!options.terminal) {
    options.print(
      [row.at, symbol, row.price || '-', `${row.sources} sources`, row.spread, row.note]
        .filter(Boolean)
        .join('  '),
    );
    return;
  }
  const lines = table(options.symbols, state.rows);
  // Back over the table drawn last time, each line cleared and drawn again.
  const up = state.drawn > 0 ? `\u001b[${state.drawn}A` : '';
  options.print(`${up}${lines.map((line) => `\u001b[2K${line}`).join('\n')}`);
  state.drawn = lines.length;
}

/** The table: one row per symbol asked, in that order (a mint asked for is shown as asked). */
export function table(symbols: string[], rows: Map<string, Row>): string[] {
  const body = symbols.map((asked) => {
    const row = rows.get(asked.toUpperCase()) ?? rows.get(asked);
    return [
      asked,
      row?.price ?? '…',
      row ? String(row.sources) : '',
      row?.spread ?? '',
      row?.at.slice(11, 23) ?? '',
      row?.note ?? '',
    ];
  });
  const all = [['SYMBOL', 'VWAP (USD)', 'SOURCES', 'SPREAD', 'AT (UTC)', ''], ...body];
  const widths = all[0]?.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length))) ?? [];
  return all.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}
