import type { Queryable } from '../../db/database.js';
import * as sql from './market-sql.js';
import { type MarketStateRow, marketState } from './market-state.js';

/** A trade as `event: trade` sends it. */
export interface StreamedTrade {
  marketId: string;
  tradeId: string;
  outcome: number;
  price: number;
  shares: string;
  /** ISO 8601 in UTC to the millisecond, as `toISOString` writes it (the writer orders by it as text). */
  at: string;
}

/** What a transaction changed in markets, as the market stream needs to know it. */
export interface MarketChanges {
  /** Markets whose status, book, trades or resolution may have changed. */
  marketIds: Iterable<string>;
  /** Orders filled or cancelled: their markets' books changed. */
  orderIds?: readonly string[];
  /** Trades recorded, each sent as `event: trade`. */
  trades?: readonly StreamedTrade[];
}

interface Pending {
  marketId: string;
  kind: 'market' | 'trade' | 'resolved';
  /** How many events the row holds: its data's lines (a market's trades), else 1. */
  events: number;
  data: string;
}

/** The order a market's trades are sent in: `at` (to the millisecond), then trade id. */
function byTime(a: StreamedTrade, b: StreamedTrade): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.tradeId < b.tradeId ? -1 : 1;
}

/**
 * The trades of a transaction as one row per market (migration 0042), each market's in (at, trade
 * id) order, the markets in the order of their first trade. Each market's trades are sorted on their
 * own: an ingestion chunk's 200 short sorts cost less than one of its 4,250 trades
 * (docs/performance.md#stream-rows-in-nodejs).
 */
function tradeRows(trades: readonly StreamedTrade[]): Pending[] {
  const byMarket = new Map<string, StreamedTrade[]>();
  for (const trade of trades) {
    const list = byMarket.get(trade.marketId);
    if (list) list.push(trade);
    else byMarket.set(trade.marketId, [trade]);
  }
  const groups = [...byMarket.values()].map((list) => list.sort(byTime));
  groups.sort((a, b) => byTime(a[0] as StreamedTrade, b[0] as StreamedTrade));
  return groups.map((list) => ({
    marketId: (list[0] as StreamedTrade).marketId,
    kind: 'trade',
    events: list.length,
    data: list.map((trade) => JSON.stringify(trade)).join('\n'),
  }));
}

/**
 * The market stream's writer (docs/streams.md#markets), called by every transaction that changes a
 * market, last before it commits: a `trade` event per trade (a market's trades one row), a `market` event for each market whose
 * status, prices or probability now differ from its last one, a `resolved` event when it has just
 * been resolved; ids taken under a lock held until commit (ascending in commit order); one
 * notification, so that each API process reads the new rows once.
 */
export async function recordMarketChanges(tx: Queryable, changes: MarketChanges): Promise<void> {
  const ids = new Set(changes.marketIds);
  const trades = changes.trades ?? [];
  for (const trade of trades) ids.add(trade.marketId);
  if (changes.orderIds && changes.orderIds.length > 0) {
    const rows = await tx.query<{ market_id: string }>(sql.ORDER_MARKETS, [changes.orderIds]);
    for (const row of rows) ids.add(row.market_id);
  }
  if (ids.size === 0) return;
  // Locked before the states are read: a concurrent writer's changes are committed and seen, so a
  // `market` event never states something older than the one before it.
  await tx.query(sql.LOCK);
  // The markets that traded: their state has changed (their trade count), known without their last event.
  const traded = [...new Set(trades.map((trade) => trade.marketId))];
  const states = await tx.query<MarketStateRow & { last: string | null }>(sql.CHANGED, [[...ids], traded]);
  // A DRAFT market is not one any route shows: its trades and resolution are not streamed. Its
  // `market` event is, as the stream's mark that it turned DRAFT (the readers end its streams).
  const drafts = new Set(states.filter((row) => row.status === 'DRAFT').map((row) => row.id));
  const pending = tradeRows(
    drafts.size === 0 ? trades : trades.filter((trade) => !drafts.has(trade.marketId)),
  );
  for (const row of states.sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const state = marketState(row);
    const data = JSON.stringify(state);
    if (data === row.last) continue;
    pending.push({ marketId: row.id, kind: 'market', events: 1, data });
    const before = row.last === null ? null : (JSON.parse(row.last) as { resolution: unknown });
    if (state.resolution && !before?.resolution && !drafts.has(row.id)) {
      const winner = state.outcomes[state.resolution.winningOutcomeIndex];
      pending.push({
        marketId: row.id,
        kind: 'resolved',
        events: 1,
        data: JSON.stringify({
          marketId: row.id,
          status: state.status,
          winningOutcomeIndex: state.resolution.winningOutcomeIndex,
          winningOutcomeLabel: winner?.label ?? null,
          resolvedAt: state.resolution.resolvedAt,
        }),
      });
    }
  }
  if (pending.length === 0) return;
  await tx.query(sql.INSERT, [
    pending.map((p) => p.marketId),
    pending.map((p) => p.kind),
    pending.map((p) => p.events),
    pending.reduce((sum, p) => sum + p.events, 0),
    pending.map((p) => p.data).join(sql.ROW_SEPARATOR),
  ]);
}
