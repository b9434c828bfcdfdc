import { jsonSchema, type ToolExecutionOptions, type ToolSet, tool } from 'ai';
import type { Clock } from '../../lib/clock.js';
import { parseIsoTimestamp } from '../../lib/time.js';
import type { SibylTool } from '../evidence.js';
import type { MarketFacts, SibylData } from './port.js';

/**
 * Sibyl's own data as function tools every model may call (docs/ai.md#sibyls-tools): `sibyl_price`
 * and `sibyl_market`, answered from the database in the resolver's process, free to the account.
 * Whatever a model sends, a call answers a small JSON object — the data, "no data", or an error
 * naming what was wrong — and never throws: a bad call costs the model a round, not the answer.
 */

/** Why a call got no data; `status: "error"` with one of these in `error`. */
export type ToolErrorCode =
  | 'invalid_input'
  | 'invalid_symbol'
  | 'unknown_symbol'
  | 'invalid_time'
  | 'future_time'
  | 'unknown_market'
  | 'tool_call_limit'
  | 'deadline'
  | 'unavailable';

export type ToolOutput = Record<string, unknown> & { status: 'ok' | 'no_data' | 'error' };

/** The longest market description a `sibyl_market` answer carries, and each outcome label. */
export const MARKET_TEXT_LIMITS = { title: 300, description: 1000, label: 100 } as const;

const SYMBOL_MAX_CHARS = 64;
const ID_MAX_CHARS = 100;

function error(code: ToolErrorCode, message: string): ToolOutput {
  return { status: 'error', error: code, message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const cut = (text: string, max: number) => {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
};

export interface SibylToolsOptions {
  clock: Clock;
  /** Calls this tool set answers; later ones get `tool_call_limit` (AI_MAX_TOOL_CALLS). */
  maxCalls: number;
  /** The model call's signal (its timeout and the resolution's deadline): after it, calls get `deadline`. */
  signal?: AbortSignal;
}

/** `sibyl_price`'s answer to one call's input. */
export async function answerPrice(data: SibylData, input: unknown, now: Date): Promise<ToolOutput> {
  if (!isRecord(input) || typeof input.symbol !== 'string' || typeof input.at !== 'string') {
    return error('invalid_input', 'sibyl_price takes {"symbol": string, "at": ISO 8601 time with a zone}');
  }
  const symbol = input.symbol.trim();
  if (symbol === '' || symbol.length > SYMBOL_MAX_CHARS) {
    return error('invalid_symbol', 'symbol is a token symbol (e.g. SOL) or a Solana mint address');
  }
  const at = parseIsoTimestamp(input.at.trim());
  if (!at) {
    return error('invalid_time', 'at is an ISO 8601 time with a zone, e.g. 2026-11-01T12:00:00Z');
  }
  if (at.getTime() > now.getTime()) {
    return error('future_time', `at is after the current time (${now.toISOString()}): no price yet`);
  }
  const found = await data.price(symbol, at);
  const when = at.toISOString();
  switch (found.kind) {
    case 'invalid_symbol':
      return error('invalid_symbol', `symbol ${found.reason}`);
    case 'unknown_symbol':
      return error('unknown_symbol', `Sibyl knows no token ${found.symbol}`);
    case 'no_data':
      return {
        status: 'no_data',
        symbol: found.symbol,
        at: when,
        message: `no data: Sibyl has no stored price for ${found.symbol} at ${when}`,
      };
    case 'candle':
      return { status: 'ok', symbol: found.symbol, at: when, ...found.candle };
  }
}

function marketOutput(market: MarketFacts): ToolOutput {
  return {
    status: 'ok',
    id: market.id,
    title: cut(market.title, MARKET_TEXT_LIMITS.title),
    marketStatus: market.status,
    outcomes: market.outcomes.map((o) => ({ ...o, label: cut(o.label, MARKET_TEXT_LIMITS.label) })),
    closesAt: market.closesAt,
    resolution: market.resolution,
    description: cut(market.description, MARKET_TEXT_LIMITS.description),
  };
}

/** `sibyl_market`'s answer to one call's input. */
export async function answerMarket(data: SibylData, input: unknown): Promise<ToolOutput> {
  if (!isRecord(input) || typeof input.id !== 'string') {
    return error('invalid_input', 'sibyl_market takes {"id": string}, a market id or slug');
  }
  const id = input.id.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/.test(id) || id.length > ID_MAX_CHARS) {
    return error('unknown_market', 'id is a market id or slug: letters, digits and _ . : -');
  }
  const market = await data.market(id);
  if (!market) return error('unknown_market', `Sibyl has no market ${id}`);
  return marketOutput(market);
}

const PRICE_SCHEMA = jsonSchema<unknown>({
  type: 'object',
  additionalProperties: false,
  properties: {
    symbol: { type: 'string', description: 'A token symbol such as SOL or BTC, or a Solana mint address' },
    at: {
      type: 'string',
      description: 'The instant, ISO 8601 with a zone, e.g. 2026-11-01T12:00:00Z; not after the current time',
    },
  },
  required: ['symbol', 'at'],
});

const MARKET_SCHEMA = jsonSchema<unknown>({
  type: 'object',
  additionalProperties: false,
  properties: { id: { type: 'string', description: 'The market id (or slug) on Sibyl' } },
  required: ['id'],
});

/**
 * One model call's tools: a fresh count of calls per call (at most `maxCalls` answered), each
 * answered within the call's signal. A failure of the database is an error answer too, with no
 * detail: the model is told the data is unavailable, the operator sees the cause in the logs of
 * what failed around it.
 */
export function createSibylTools(data: SibylData, options: SibylToolsOptions): ToolSet {
  let calls = 0;
  const run =
    (name: SibylTool, answer: (input: unknown) => Promise<ToolOutput>) =>
    async (input: unknown, call?: ToolExecutionOptions): Promise<ToolOutput> => {
      calls++;
      if (calls > options.maxCalls) {
        return error('tool_call_limit', `at most ${options.maxCalls} calls of Sibyl's tools per answer`);
      }
      const aborted = () => options.signal?.aborted === true || call?.abortSignal?.aborted === true;
      if (aborted()) return error('deadline', 'the resolution deadline has passed');
      try {
        const output = await answer(input);
        return aborted() ? error('deadline', 'the resolution deadline has passed') : output;
      } catch {
        return error('unavailable', `${name} could not read Sibyl's data just now`);
      }
    };
  return {
    sibyl_price: tool({
      description:
        'The price Sibyl stored for a token at an instant: the volume-weighted close of the venues’ candles ' +
        'for the finest stored bucket containing it, its interval, the venues and whether the price is valid; ' +
        '"no_data" when Sibyl stored none.',
      inputSchema: PRICE_SCHEMA,
      execute: run('sibyl_price', (input) => answerPrice(data, input, options.clock.now())),
    }),
    sibyl_market: tool({
      description:
        'A prediction market on Sibyl: its status, outcomes with their probabilities, close time and how it ' +
        'is resolved.',
      inputSchema: MARKET_SCHEMA,
      execute: run('sibyl_market', (input) => answerMarket(data, input)),
    }),
  };
}
