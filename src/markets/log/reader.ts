import type { Database } from '../../db/database.js';
import * as sql from './market-sql.js';
import { type MarketState, type MarketStateRow, marketState } from './market-state.js';

/** One stored row of the market change log: one event, or a market's trades (migration 0042). */
export interface MarketLogRow {
  /** Its last event's id. */
  id: string;
  market_id: string;
  kind: string;
  /** How many events: the lines of `data`, with ids id - events + 1 … id. */
  events: number;
  data: string;
}

/** Markets' states in one view with the newest event id: everything up to `upTo` is in them. */
export interface MarketStates {
  upTo: string;
  byId: Map<string, MarketState>;
}

/**
 * The reads of the market change log that the market stream makes (docs/streams.md#markets): the
 * log is written by the markets' own transactions (`market-log.ts`), and read only through this, so
 * its tables stay the markets' alone. Built once per process with the pool.
 */
export class MarketLogReader {
  /** The channel every transaction that writes the log notifies, once, and the one topic it sends. */
  readonly channel = sql.MARKET_STREAM_CHANNEL;
  readonly topic = sql.MARKET_STREAM_TOPIC;

  constructor(private readonly db: Database) {}

  /** The newest event id: where a process starts reading when it starts listening. */
  async newest(): Promise<bigint> {
    const [row] = await this.db.query<{ id: string }>(sql.NEWEST);
    return BigInt(row?.id ?? '0');
  }

  /** The rows holding events after `after` of the markets `ids`, in id order, at most `limit` rows. */
  after(after: bigint, ids: string[], limit: number): Promise<MarketLogRow[]> {
    return this.db.query<MarketLogRow>(sql.AFTER, [after.toString(), ids, limit]);
  }

  /** Whether an event id is still kept: a resume point within the last 24 hours. */
  async kept(id: bigint): Promise<boolean> {
    const [row] = await this.db.query<{ kept: boolean }>(sql.KEPT, [id.toString()]);
    return row?.kept === true;
  }

  /** Each market's state now (those that exist), with the newest event id, in one statement. */
  async states(ids: string[]): Promise<MarketStates> {
    const rows = await this.db.query<MarketStateRow & { up_to: string }>(sql.SNAPSHOT, [ids]);
    return { upTo: rows[0]?.up_to ?? '0', byId: new Map(rows.map((row) => [row.id, marketState(row)])) };
  }

  /** Which of the markets `ids` have a `market` event after `since` and up to `upTo`. */
  async changedSince(since: bigint, upTo: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.db.query<{ market_id: string }>(sql.CHANGED_SINCE, [since.toString(), upTo, ids]);
    return new Set(rows.map((row) => row.market_id));
  }

  /** Which of `ids` are markets a stream may follow: not DRAFT (as GET /markets/{id}). */
  async streamable(ids: string[]): Promise<Set<string>> {
    return new Set((await this.db.query<{ id: string }>(sql.STREAMABLE, [ids])).map((row) => row.id));
  }
}
