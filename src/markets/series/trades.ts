import Type, { type Static } from 'typebox';
import type { Queryable } from '../../db/database.js';
import {
  type CursorCodec,
  cursorParameter,
  fingerprint,
  isTimestampKey,
  type Position,
} from '../../http/cursor.js';
import { round6 } from '../../lib/probability.js';
import { toSol } from '../read/detail.js';
import * as sql from './sql.js';

/** A market's latest trades, newest first, paged by a keyset cursor (docs/markets.md#trades). */

export const DEFAULT_TRADES_LIMIT = 50;
export const MAX_TRADES_LIMIT = 100;

export const TradesQuery = Type.Object(
  {
    outcome: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 99,
        description: 'Only this outcome’s trades; default: every outcome',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_TRADES_LIMIT, default: DEFAULT_TRADES_LIMIT }),
    ),
    cursor: cursorParameter(
      'The `nextCursor` of the previous answer, for the same market and outcome. Only a cursor the service ' +
        'made is accepted: an altered one, or one of another market or outcome, is 400 VALIDATION_ERROR',
    ),
  },
  { additionalProperties: false },
);
export type TradesQueryInput = Static<typeof TradesQuery>;

export const Trade = Type.Object(
  {
    tradeId: Type.String(),
    outcome: Type.Integer({ minimum: 0 }),
    price: Type.Integer({ minimum: 0, maximum: 10_000, description: 'Basis points' }),
    shares: Type.String({ pattern: '^\\d+$', description: 'Base units (integer string)' }),
    valueSol: Type.Number({ description: 'shares × price ÷ 10,000 lamports, in SOL' }),
    valueUsd: Type.Union([Type.Number(), Type.Null()], {
      description: 'valueSol × the SOL price of the market’s mode now; null when none can be had',
    }),
    buyer: Type.String(),
    seller: Type.String(),
    at: Type.String({ description: 'ISO 8601, UTC, to the microsecond' }),
  },
  { title: 'MarketTrade', additionalProperties: false },
);
export type TradeBody = Static<typeof Trade>;

export const MarketTrades = Type.Object(
  {
    marketId: Type.String(),
    trades: Type.Array(Trade, { description: 'Newest first (by at, then trade id)' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next (older) page; null on the last page',
    }),
  },
  { additionalProperties: false },
);
export type MarketTradesBody = Static<typeof MarketTrades>;

/** Sorts after every trade: the first page's position. */
const NEWEST: Position = { key: 'infinity', id: '' };

interface TradeRow {
  trade_id: string;
  outcome_index: number;
  price: number;
  shares: string;
  buyer: string;
  seller: string;
  at_text: string;
}

/** The cursor's binding: the market and the outcome filter. */
const tradesFingerprint = (marketId: string, outcome: number | undefined) =>
  fingerprint(['trades', marketId, outcome]);

/** Refuses an altered cursor, or one of another market or outcome, before anything is read. */
export function tradesPosition(marketId: string, query: TradesQueryInput, cursors: CursorCodec): Position {
  if (query.cursor === undefined) return NEWEST;
  return cursors.decode(query.cursor, tradesFingerprint(marketId, query.outcome), isTimestampKey);
}

/** A page of trades after `after`, with the cursor of the next page. */
export async function readTrades(
  db: Queryable,
  marketId: string,
  query: TradesQueryInput,
  after: Position,
  solUsd: number | null,
  cursors: CursorCodec,
): Promise<MarketTradesBody> {
  const limit = query.limit ?? DEFAULT_TRADES_LIMIT;
  const params: unknown[] = [marketId, after.key, after.id, limit + 1];
  const rows =
    query.outcome === undefined
      ? await db.query<TradeRow>(sql.TRADES, params)
      : await db.query<TradeRow>(sql.OUTCOME_TRADES, [...params, query.outcome]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last
      ? cursors.encode({ key: last.at_text, id: last.trade_id }, tradesFingerprint(marketId, query.outcome))
      : null;
  return {
    marketId,
    trades: page.map((r) => {
      const lamports = (BigInt(r.shares) * BigInt(r.price)) / 10_000n;
      const valueSol = toSol(lamports.toString());
      return {
        tradeId: r.trade_id,
        outcome: r.outcome_index,
        price: r.price,
        shares: r.shares,
        valueSol,
        valueUsd: solUsd === null ? null : round6(valueSol * solUsd),
        buyer: r.buyer,
        seller: r.seller,
        at: r.at_text,
      };
    }),
    nextCursor,
  };
}
