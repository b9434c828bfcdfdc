import type { Queryable } from '../../db/database.js';
import { parseTarget } from '../../prices/index.js';
import { applyResolution, applyStatus } from '../lifecycle/status.js';
import type { EventOf, EventType, MarketEvent, ParsedEvent } from './events.js';
import * as sql from './ingest-sql.js';

/** What became of one event of a chunk: null = applied. */
export type LineOutcome = 'skipped' | 'refused';
export type LineReason = 'duplicate' | 'invalid' | 'conflict' | 'unknown_market' | 'unknown_order';
export type Verdict = { outcome: LineOutcome; reason: LineReason; message: string } | null;

/**
 * Market creations first, then order placements, then everything else by `at`: a market's other
 * events may come earlier in a file than the market itself, and a fill earlier than its order.
 * Only existence depends on this order; every state change is guarded by (at, event id).
 */
function phase(type: EventType): number {
  return type === 'market.created' ? 0 : type === 'order.placed' ? 1 : 2;
}

export function byPhaseThenTime(a: ParsedEvent, b: ParsedEvent): number {
  return phase(a.event.type) - phase(b.event.type) || a.atMicros - b.atMicros || a.line - b.line;
}

/** Whether `a` is newer than `b` by (at, event id), exactly as the database compares them. */
function newer(a: ParsedEvent, b: ParsedEvent): boolean {
  return a.atMicros !== b.atMicros ? a.atMicros > b.atMicros : a.event.id > b.event.id;
}

/** A second sighting of an event id: the same body is a duplicate, another body a conflict. */
export function sameBody(first: { line?: number; sha256: string }, again: ParsedEvent): NonNullable<Verdict> {
  const where = first.line === undefined ? 'before' : `on line ${first.line}`;
  return first.sha256 === again.sha256
    ? { outcome: 'skipped', reason: 'duplicate', message: `event ${again.event.id} was ingested ${where}` }
    : {
        outcome: 'refused',
        reason: 'conflict',
        message: `event id ${again.event.id} was ingested ${where} with a different body`,
      };
}

/** A listed token by its symbol (so `sol` is stored as `SOL`); a mint as given. */
function canonicalSymbol(text: string): string {
  const parsed = parseTarget(text);
  return parsed.kind === 'target' ? (parsed.target.token?.symbol ?? text.trim()) : text.trim();
}

/** Applies one chunk in one transaction; returns a verdict per event (null = applied). */
export async function applyChunk(tx: Queryable, chunk: ParsedEvent[]): Promise<Verdict[]> {
  const verdicts: Verdict[] = chunk.map(() => null);
  const recorded = await tx.query<{ id: string }>(sql.RECORD_EVENTS, [
    chunk.map((p) => p.event.id),
    chunk.map((p) => p.event.type),
    chunk.map((p) => p.sha256),
    chunk.map((p) => p.at),
  ]);
  const isNew = new Set(recorded.map((r) => r.id));
  const seenIds = chunk.filter((p) => !isNew.has(p.event.id)).map((p) => p.event.id);
  if (seenIds.length > 0) {
    const seen = new Map(
      (await tx.query<{ id: string; sha: string }>(sql.SEEN_EVENTS, [seenIds])).map((r) => [r.id, r.sha]),
    );
    chunk.forEach((p, i) => {
      if (!isNew.has(p.event.id)) verdicts[i] = sameBody({ sha256: seen.get(p.event.id) ?? '' }, p);
    });
  }

  const work = new ChunkWork(tx, chunk, verdicts, isNew);
  await work.apply();

  const forget = chunk.filter((p, i) => isNew.has(p.event.id) && verdicts[i] !== null).map((p) => p.event.id);
  if (forget.length > 0) await tx.query(sql.FORGET_EVENTS, [forget]);
  return verdicts;
}

/** The new events of one chunk, applied type by type with one statement per type. */
class ChunkWork {
  private readonly markets = new Map<string, { id: string; outcomeCount: number }>();
  private readonly orders = new Map<string, bigint>();

  constructor(
    private readonly tx: Queryable,
    private readonly chunk: ParsedEvent[],
    private readonly verdicts: Verdict[],
    private readonly isNew: Set<string>,
  ) {}

  private pending<T extends EventType>(type: T): { i: number; p: ParsedEvent; e: EventOf<T> }[] {
    const out: { i: number; p: ParsedEvent; e: EventOf<T> }[] = [];
    this.chunk.forEach((p, i) => {
      if (p.event.type === type && this.isNew.has(p.event.id) && this.verdicts[i] === null)
        out.push({ i, p, e: p.event as EventOf<T> });
    });
    return out;
  }

  private refuse(i: number, reason: LineReason, message: string): void {
    this.verdicts[i] = { outcome: 'refused', reason, message };
  }

  async apply(): Promise<void> {
    await this.loadReferences();
    for (const { i, p, e } of this.pending('market.created')) await this.createMarket(i, p, e);
    await this.applyStatuses();
    await this.placeOrders();
    await this.updateOrders();
    await this.insertTrades();
    await this.upsertPositions();
    await this.upsertStakes();
  }

  private async loadReferences(): Promise<void> {
    const marketIds = new Set<string>();
    const slugs: string[] = [];
    const orderIds = new Set<string>();
    for (const { event } of this.chunk) {
      if (event.type === 'market.created') {
        marketIds.add(event.market.id);
        slugs.push(event.market.slug);
      } else if ('marketId' in event) marketIds.add(event.marketId);
      if (event.type === 'order.filled' || event.type === 'order.cancelled') orderIds.add(event.orderId);
    }
    const markets = await this.tx.query<{ id: string; slug: string; outcome_count: number }>(
      sql.KNOWN_MARKETS,
      [[...marketIds], slugs],
    );
    for (const m of markets) {
      const known = { id: m.id, outcomeCount: m.outcome_count };
      this.markets.set(m.id, known);
      this.markets.set(`slug:${m.slug}`, known);
    }
    if (orderIds.size > 0) {
      const orders = await this.tx.query<{ order_id: string; shares: string }>(sql.KNOWN_ORDERS, [
        [...orderIds],
      ]);
      for (const o of orders) this.orders.set(o.order_id, BigInt(o.shares));
    }
  }

  private async createMarket(i: number, p: ParsedEvent, e: EventOf<'market.created'>): Promise<void> {
    const m = e.market;
    if (this.markets.has(m.id) || this.markets.has(`slug:${m.slug}`)) {
      const which = this.markets.has(m.id) ? `market ${m.id}` : `slug ${m.slug}`;
      return this.refuse(i, 'conflict', `${which} already exists`);
    }
    const username = m.creator.username ?? null;
    await this.tx.query(sql.ENSURE_CREATOR, [m.creator.wallet, username, p.at]);
    const r = m.resolution;
    const inserted = await this.tx.query(sql.INSERT_MARKET, [
      m.id,
      m.slug,
      m.title,
      m.description,
      m.category,
      m.imageUrl ?? null,
      m.marketType,
      m.outcomes.length,
      m.closesAt,
      m.feeBps,
      m.lockPeriodSeconds,
      m.creator.wallet,
      r.type,
      r.symbol === undefined ? null : canonicalSymbol(r.symbol),
      r.condition ?? null,
      r.targetPrice ?? null,
      r.tolerance ?? null,
      e.sandbox === true,
      p.at,
      e.id,
      m.outcomes,
    ]);
    // Another ingestion created it (or took the slug) since the references were read.
    if (inserted.length === 0)
      return this.refuse(i, 'conflict', `market ${m.id} or slug ${m.slug} already exists`);
    await this.tx.query(sql.UPDATE_CREATOR, [m.creator.wallet, username, p.at]);
    await this.tx.query(sql.INSERT_OUTCOMES, [m.id, m.outcomes]);
    const known = { id: m.id, outcomeCount: m.outcomes.length };
    this.markets.set(m.id, known);
    this.markets.set(`slug:${m.slug}`, known);
  }

  /** The market and outcome an event names exist; otherwise the event is refused. */
  private checkMarket(i: number, event: MarketEvent & { marketId: string }): boolean {
    const market = this.markets.get(event.marketId);
    if (!market) {
      this.refuse(
        i,
        'unknown_market',
        `market ${event.marketId} is not known (send its market.created first)`,
      );
      return false;
    }
    if ('outcome' in event && event.outcome >= market.outcomeCount) {
      this.refuse(
        i,
        'invalid',
        `outcome ${event.outcome} is out of range: market ${market.id} has ${market.outcomeCount}`,
      );
      return false;
    }
    if (event.type === 'market.resolved' && event.winningOutcomeIndex >= market.outcomeCount) {
      this.refuse(
        i,
        'invalid',
        `winningOutcomeIndex is out of range: market ${market.id} has ${market.outcomeCount}`,
      );
      return false;
    }
    return true;
  }

  /** Status changes and resolutions, one by one in `at` order, so the transition log reads in order. */
  private async applyStatuses(): Promise<void> {
    const changes = [...this.pending('market.status'), ...this.pending('market.resolved')].sort((a, b) =>
      byPhaseThenTime(a.p, b.p),
    );
    for (const { i, p, e } of changes) {
      if (!this.checkMarket(i, e)) continue;
      if (e.type === 'market.status') {
        await applyStatus(this.tx, {
          marketId: e.marketId,
          status: e.status,
          at: p.at,
          eventId: e.id,
          by: 'platform',
        });
      } else {
        await applyResolution(this.tx, {
          marketId: e.marketId,
          winningOutcomeIndex: e.winningOutcomeIndex,
          at: p.at,
          eventId: e.id,
          by: 'platform',
          details: { platform: e.details ?? null },
        });
      }
    }
  }

  private async placeOrders(): Promise<void> {
    const rows: { i: number; p: ParsedEvent; e: EventOf<'order.placed'> }[] = [];
    const inChunk = new Set<string>();
    for (const item of this.pending('order.placed')) {
      if (!this.checkMarket(item.i, item.e)) continue;
      if (inChunk.has(item.e.orderId)) {
        this.refuse(item.i, 'conflict', `order ${item.e.orderId} is placed by another event`);
        continue;
      }
      inChunk.add(item.e.orderId);
      rows.push(item);
    }
    if (rows.length === 0) return;
    rows.sort((a, b) => (a.e.orderId < b.e.orderId ? -1 : 1));
    const inserted = await this.tx.query<{ order_id: string }>(sql.INSERT_ORDERS, [
      rows.map((r) => r.e.orderId),
      rows.map((r) => r.e.marketId),
      rows.map((r) => r.e.outcome),
      rows.map((r) => r.e.wallet),
      rows.map((r) => r.e.side),
      rows.map((r) => r.e.price),
      rows.map((r) => r.e.shares),
      rows.map((r) => r.p.at),
      rows.map((r) => r.e.id),
    ]);
    const placed = new Set(inserted.map((r) => r.order_id));
    for (const r of rows) {
      if (placed.has(r.e.orderId)) this.orders.set(r.e.orderId, BigInt(r.e.shares));
      else this.refuse(r.i, 'conflict', `order ${r.e.orderId} was placed by another event`);
    }
  }

  private async updateOrders(): Promise<void> {
    const newest = new Map<string, { p: ParsedEvent; e: EventOf<'order.filled' | 'order.cancelled'> }>();
    for (const item of [...this.pending('order.filled'), ...this.pending('order.cancelled')]) {
      const { i, p, e } = item;
      const size = this.orders.get(e.orderId);
      if (size === undefined) {
        this.refuse(i, 'unknown_order', `order ${e.orderId} is not known (send its order.placed first)`);
        continue;
      }
      if (e.shares !== undefined && BigInt(e.shares) > size) {
        this.refuse(i, 'invalid', `shares (what remains open) ${e.shares} exceed the order's ${size}`);
        continue;
      }
      const current = newest.get(e.orderId);
      if (!current || newer(p, current.p)) newest.set(e.orderId, { p, e });
    }
    const rows = [...newest.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
    if (rows.length === 0) return;
    const remaining = rows.map((r) => r.e.shares ?? '0');
    await this.tx.query(sql.UPDATE_ORDERS, [
      rows.map((r) => r.e.orderId),
      remaining,
      rows.map((r, k) =>
        remaining[k] !== '0' ? 'open' : r.e.type === 'order.filled' ? 'filled' : 'cancelled',
      ),
      rows.map((r) => r.p.at),
      rows.map((r) => r.e.id),
    ]);
  }

  private async insertTrades(): Promise<void> {
    const rows: { i: number; p: ParsedEvent; e: EventOf<'trade'> }[] = [];
    const inChunk = new Set<string>();
    for (const item of this.pending('trade')) {
      if (!this.checkMarket(item.i, item.e)) continue;
      if (inChunk.has(item.e.tradeId)) {
        this.refuse(item.i, 'conflict', `trade ${item.e.tradeId} is recorded by another event`);
        continue;
      }
      inChunk.add(item.e.tradeId);
      rows.push(item);
    }
    if (rows.length === 0) return;
    rows.sort((a, b) => (a.e.tradeId < b.e.tradeId ? -1 : 1));
    const inserted = await this.tx.query<{ trade_id: string }>(sql.INSERT_TRADES, [
      rows.map((r) => r.e.tradeId),
      rows.map((r) => r.e.marketId),
      rows.map((r) => r.e.outcome),
      rows.map((r) => r.e.price),
      rows.map((r) => r.e.shares),
      rows.map((r) => r.e.buyer),
      rows.map((r) => r.e.seller),
      rows.map((r) => r.p.at),
    ]);
    const recorded = new Set(inserted.map((r) => r.trade_id));
    for (const r of rows) {
      if (!recorded.has(r.e.tradeId))
        this.refuse(r.i, 'conflict', `trade ${r.e.tradeId} was recorded by another event`);
    }
  }

  /** Keeps, per row key, only the newest of the chunk's events (the others are superseded). */
  private newestBy<T extends 'position' | 'stake'>(type: T, key: (e: EventOf<T>) => string) {
    const newest = new Map<string, { p: ParsedEvent; e: EventOf<T> }>();
    for (const { i, p, e } of this.pending(type)) {
      if (!this.checkMarket(i, e)) continue;
      const k = key(e);
      const current = newest.get(k);
      if (!current || newer(p, current.p)) newest.set(k, { p, e });
    }
    return [...newest.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
  }

  private async upsertPositions(): Promise<void> {
    const rows = this.newestBy('position', (e) => `${e.marketId}\u0000${e.wallet}\u0000${e.outcome}`);
    if (rows.length === 0) return;
    await this.tx.query(sql.UPSERT_POSITIONS, [
      rows.map((r) => r.e.marketId),
      rows.map((r) => r.e.wallet),
      rows.map((r) => r.e.outcome),
      rows.map((r) => r.e.shares),
      rows.map((r) => r.e.wagered),
      rows.map((r) => r.p.at),
      rows.map((r) => r.e.id),
    ]);
  }

  private async upsertStakes(): Promise<void> {
    const rows = this.newestBy('stake', (e) => `${e.marketId}\u0000${e.wallet}`);
    if (rows.length === 0) return;
    await this.tx.query(sql.UPSERT_STAKES, [
      rows.map((r) => r.e.marketId),
      rows.map((r) => r.e.wallet),
      rows.map((r) => r.e.username ?? null),
      rows.map((r) => r.e.amount),
      rows.map((r) => r.p.at),
      rows.map((r) => r.e.id),
    ]);
  }
}
