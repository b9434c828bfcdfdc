import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SibylData } from '../../src/ai/index.js';
import { createAiQueue } from '../../src/ai/queue.js';
import { createSibylTools } from '../../src/ai/tools/sibyl-tools.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createPorts, type Ports, sibylData } from '../../src/ports.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { answerCandles, expectedPrice, type FakeVenueState } from '../historical/fake-venues.js';
import { marketCreated, ndjson } from '../markets/events.js';
import { CALLBACK_URL, poll, submit } from './helpers.js';

/**
 * Sibyl's own tools (docs/ai.md#sibyls-tools): `sibyl_price` and `sibyl_market` answer every call
 * with a small JSON object — the data, "no data", or an error naming the bad argument — and never
 * throw; with the real composition (`createPorts`), a sandbox resolution with
 * `[sandbox:price=SYMBOL@TIME]` calls `sibyl_price` through the tools each model call is given, and
 * every vote's evidence carries the candle stored in the database.
 */

type Execute = (input: unknown, options?: unknown) => Promise<Record<string, unknown>>;
const execute = (tools: ReturnType<typeof createSibylTools>, name: string) =>
  tools[name]?.execute as unknown as Execute;

const NOW = '2026-06-15T12:20:00Z';

describe('the tools on bad arguments (never a throw)', () => {
  const asked: unknown[][] = [];
  const data: SibylData = {
    async price(symbol, at) {
      asked.push(['price', symbol, at.toISOString()]);
      if (symbol === 'NOPE') return { kind: 'unknown_symbol', symbol: 'NOPE' };
      if (symbol === 'bad!') return { kind: 'invalid_symbol', reason: 'is not a symbol' };
      if (symbol === 'BOOM') throw new Error('connection refused');
      return { kind: 'no_data', symbol: symbol.toUpperCase() };
    },
    async market(id) {
      asked.push(['market', id]);
      return null;
    },
  };
  const tools = (maxCalls = 100, signal?: AbortSignal) =>
    createSibylTools(data, { clock: new ManualClock(NOW), maxCalls, ...(signal ? { signal } : {}) });
  beforeEach(() => {
    asked.length = 0;
  });

  it.each([
    ['no object', 'SOL', 'invalid_input'],
    ['an array', [], 'invalid_input'],
    ['a number for the symbol', { symbol: 5, at: NOW }, 'invalid_input'],
    ['no time', { symbol: 'SOL' }, 'invalid_input'],
    ['a time as a number', { symbol: 'SOL', at: 1_781_000_000_000 }, 'invalid_input'],
    ['an empty symbol', { symbol: ' ', at: NOW }, 'invalid_symbol'],
    ['a symbol of 65 characters', { symbol: 'A'.repeat(65), at: NOW }, 'invalid_symbol'],
    ['a time without a zone', { symbol: 'SOL', at: '2026-06-15T12:00:00' }, 'invalid_time'],
    ['a time that is no time', { symbol: 'SOL', at: 'yesterday' }, 'invalid_time'],
    ['an impossible date', { symbol: 'SOL', at: '2026-02-30T00:00:00Z' }, 'invalid_time'],
    ['a time beyond year 9999', { symbol: 'SOL', at: '9999-12-31T23:00:00-05:00' }, 'invalid_time'],
    ['a time after now', { symbol: 'SOL', at: '2026-06-15T12:20:01Z' }, 'future_time'],
  ])('sibyl_price with %s answers %s without asking the database', async (_name, input, code) => {
    const output = await execute(tools(), 'sibyl_price')(input);
    expect(output).toEqual({ status: 'error', error: code, message: expect.any(String) });
    expect(asked).toEqual([]);
  });

  it('sibyl_price: what the stored prices refuse is an error too; a failing database is "unavailable"', async () => {
    const price = execute(tools(), 'sibyl_price');
    expect(await price({ symbol: 'NOPE', at: NOW })).toEqual({
      status: 'error',
      error: 'unknown_symbol',
      message: 'Sibyl knows no token NOPE',
    });
    expect(await price({ symbol: 'bad!', at: NOW })).toMatchObject({ error: 'invalid_symbol' });
    expect(await price({ symbol: 'BOOM', at: NOW })).toEqual({
      status: 'error',
      error: 'unavailable',
      message: "sibyl_price could not read Sibyl's data just now",
    });
    // The current time itself is not in the future; a zone other than Z is read as the instant it names.
    expect(await price({ symbol: 'sol', at: '2026-06-15T14:20:00+02:00' })).toEqual({
      status: 'no_data',
      symbol: 'SOL',
      at: '2026-06-15T12:20:00.000Z',
      message: 'no data: Sibyl has no stored price for SOL at 2026-06-15T12:20:00.000Z',
    });
  });

  it.each([
    ['no object', 7, 'invalid_input'],
    ['a number for the id', { id: 42 }, 'invalid_input'],
    ['an id with spaces', { id: 'a market' }, 'unknown_market'],
    ['an id of 101 characters', { id: 'm'.repeat(101) }, 'unknown_market'],
  ])('sibyl_market with %s answers %s without asking the database', async (_name, input, code) => {
    expect(await execute(tools(), 'sibyl_market')(input)).toEqual({
      status: 'error',
      error: code,
      message: expect.any(String),
    });
    expect(asked).toEqual([]);
  });

  it('sibyl_market with an id Sibyl does not have answers unknown_market', async () => {
    expect(await execute(tools(), 'sibyl_market')({ id: 'mkt-none' })).toEqual({
      status: 'error',
      error: 'unknown_market',
      message: 'Sibyl has no market mkt-none',
    });
    expect(asked).toEqual([['market', 'mkt-none']]);
  });

  it('answers at most maxCalls calls per tool set, counted over both tools', async () => {
    const set = tools(2);
    await execute(set, 'sibyl_price')({ symbol: 'SOL', at: NOW });
    await execute(set, 'sibyl_market')({ id: 'x' });
    expect(await execute(set, 'sibyl_price')({ symbol: 'SOL', at: NOW })).toEqual({
      status: 'error',
      error: 'tool_call_limit',
      message: "at most 2 calls of Sibyl's tools per answer",
    });
    expect(asked).toHaveLength(2);
    // Another model call's set counts from zero.
    expect(await execute(tools(2), 'sibyl_price')({ symbol: 'SOL', at: NOW })).toMatchObject({
      status: 'no_data',
    });
  });

  it('answers "deadline" once the model call’s signal has aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(
      await execute(tools(3, controller.signal), 'sibyl_price')({ symbol: 'SOL', at: NOW }),
    ).toMatchObject({ status: 'error', error: 'deadline' });
    expect(asked).toEqual([]);
  });
});

const HOUR = 3_600_000;
const DAY0 = Date.parse('2026-06-15T00:00:00Z');
const T0 = DAY0 + 12 * HOUR + 20 * 60_000;
const hour = (h: number) => DAY0 + h * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

let ctx: TestContext;
let venues: FakeServer;
let live: TestAccount;
let sandbox: TestAccount;
let ports: Ports;
const state: FakeVenueState = { now: () => ctx.clock.now().getTime(), missing: new Set(), override: {} };

beforeAll(async () => {
  venues = await startFakeServer((request) => answerCandles(request, state));
  ctx = await createTestContext({
    config: {
      PRICE_VENUES: 'binance,coinbase,okx',
      BINANCE_BASE_URL: venues.url,
      COINBASE_BASE_URL: venues.url,
      OKX_BASE_URL: venues.url,
      PRICE_VENUE_TIMEOUT_MS: '2000',
    },
  });
  ctx.clock.set(new Date(T0));
  live = await ctx.createAccount({ mode: 'live', balanceUsd: '10.00' });
  sandbox = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' });
  // The candles Sibyl stores when a live account asks for history: hours 3–8 at 1h, 05:00–06:00 at 15m.
  for (const query of [
    { startTime: iso(hour(3)), endTime: iso(hour(8)), interval: '1h' },
    { startTime: iso(hour(5)), endTime: iso(hour(6)), interval: '15m' },
  ]) {
    const response = await ctx.request(live.key, {
      method: 'GET',
      url: `/api/v1/historical/price/SOL?${new URLSearchParams(query)}`,
    });
    expect(response.statusCode, response.body).toBe(200);
  }
  // The process's own ports, as `sibyl serve`, `sibyl work` and the lifecycle build them.
  ports = await createPorts(ctx.config, ctx.database.db, ctx.clock);
});

afterAll(async () => {
  await ports?.close();
  await ctx?.close();
  await venues?.close();
});

const ALL = ['binance', 'coinbase', 'okx'] as const;

describe('the tools on the database', () => {
  const tools = () =>
    createSibylTools(sibylData(ctx.config, ctx.database.db, ctx.clock), { clock: ctx.clock, maxCalls: 10 });

  it('sibyl_price gives the stored candle of the finest interval containing the instant', async () => {
    const price = execute(tools(), 'sibyl_price');
    const fifteen = 15 * 60_000;
    expect(await price({ symbol: 'sol', at: '2026-06-15T05:31:00Z' })).toEqual({
      status: 'ok',
      symbol: 'SOL',
      at: '2026-06-15T05:31:00.000Z',
      interval: '15m',
      openTime: '2026-06-15T05:30:00.000Z',
      closeTime: '2026-06-15T05:45:00.000Z',
      price: expectedPrice([...ALL], hour(5) + 2 * fifteen, fifteen),
      sources: [...ALL],
      valid: true,
    });
    expect(await price({ symbol: 'SOL', at: '2026-06-15T07:59:59Z' })).toEqual({
      status: 'ok',
      symbol: 'SOL',
      at: '2026-06-15T07:59:59.000Z',
      interval: '1h',
      openTime: '2026-06-15T07:00:00.000Z',
      closeTime: '2026-06-15T08:00:00.000Z',
      price: expectedPrice([...ALL], hour(7), HOUR),
      sources: [...ALL],
      valid: true,
    });
    // 08:00 opens a bucket nothing was stored for; a known token never asked about has none either.
    expect(await price({ symbol: 'SOL', at: '2026-06-15T08:00:00Z' })).toMatchObject({ status: 'no_data' });
    expect(await price({ symbol: 'BTC', at: '2026-06-15T05:31:00Z' })).toMatchObject({
      status: 'no_data',
      symbol: 'BTC',
    });
    expect(await price({ symbol: 'NOTATOKEN', at: NOW })).toMatchObject({ error: 'unknown_symbol' });
    expect(await price({ symbol: 'SO-L', at: NOW })).toMatchObject({ error: 'invalid_symbol' });
  });

  it('sibyl_market gives the status, outcomes with probabilities, close time and rule', async () => {
    const created = marketCreated(
      {
        id: 'MKT.tools',
        title: 'Will SOL close above 150?',
        closesAt: '2026-06-30T00:00:00Z',
        resolution: {
          type: 'PRICE_FEED',
          symbol: 'SOL',
          condition: 'above',
          targetPrice: 150,
          tolerance: 0.5,
        },
      },
      { at: '2026-06-01T00:00:00Z' },
    );
    expect(await ingestText(ctx.database.db, ndjson([created]))).toMatchObject({ refused: 0 });
    const market = execute(tools(), 'sibyl_market');
    const expected = {
      status: 'ok',
      id: 'MKT.tools',
      title: 'Will SOL close above 150?',
      marketStatus: 'OPEN',
      outcomes: [
        { index: 0, label: 'Yes', probability: 0.5 },
        { index: 1, label: 'No', probability: 0.5 },
      ],
      closesAt: '2026-06-30T00:00:00.000Z',
      resolution: {
        type: 'PRICE_FEED',
        rule:
          'from the VWAP of SOL once the market closes: outcome 0 when it is above 150 + 0.5 USD, outcome 1 ' +
          'when below 150 − 0.5 USD; inside that band, or with no valid price, an administrator decides',
        winningOutcomeIndex: null,
        resolvedAt: null,
      },
      description: 'A test market',
    };
    expect(await market({ id: 'MKT.tools' })).toEqual(expected);
    // By its slug too.
    expect(await market({ id: 'mkt-tools' })).toEqual(expected);
  });
});

describe('POST /ai/resolve in sandbox with [sandbox:price=SYMBOL@TIME]', () => {
  /** Submits, drains a worker's AI queue built on the process's ports, and polls the record. */
  async function resolveWith(context: string) {
    const response = await submit(ctx, sandbox.key, {
      question: 'Did SOL trade above 100 USD on 2026-06-15?',
      outcomes: ['Yes', 'No'],
      callbackUrl: CALLBACK_URL,
      context,
    });
    expect(response.statusCode, response.body).toBe(200);
    const queue = createAiQueue({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      resolver: ports.resolver,
      callbacks: webhookOutbox,
      config: ctx.config.ai,
      attestations: ports.attestations,
    });
    expect(await queue.drain()).toBe(1);
    const record = await poll(ctx, sandbox.key, response.json().requestId);
    expect(record.statusCode, record.body).toBe(200);
    return record.json();
  }

  it('every vote’s evidence holds the call and the candle stored in the database, then its web source', async () => {
    const record = await resolveWith('[sandbox:price=SOL@2026-06-15T07:30:00Z]');
    expect(record.status).toBe('COMPLETED');
    expect(record.result.canDetermine).toBe(true);
    expect(record.votes).toHaveLength(4);
    for (const vote of record.votes) {
      expect(vote.evidence).toEqual([
        {
          kind: 'sibyl',
          tool: 'sibyl_price',
          input: { symbol: 'SOL', at: '2026-06-15T07:30:00Z' },
          output: {
            status: 'ok',
            symbol: 'SOL',
            at: '2026-06-15T07:30:00.000Z',
            interval: '1h',
            openTime: '2026-06-15T07:00:00.000Z',
            closeTime: '2026-06-15T08:00:00.000Z',
            price: expectedPrice([...ALL], hour(7), HOUR),
            sources: [...ALL],
            valid: true,
          },
        },
        expect.objectContaining({ kind: 'web', url: expect.stringMatching(/^https:\/\/example\.com\//) }),
      ]);
    }
  });

  it('with nothing stored at that time, the output says no data', async () => {
    const record = await resolveWith('[sandbox:price=SOL@2026-06-14T07:30:00Z] [sandbox:evidence=none]');
    expect(record.status).toBe('COMPLETED');
    for (const vote of record.votes) {
      expect(vote.evidence).toEqual([
        {
          kind: 'sibyl',
          tool: 'sibyl_price',
          input: { symbol: 'SOL', at: '2026-06-14T07:30:00Z' },
          output: {
            status: 'no_data',
            symbol: 'SOL',
            at: '2026-06-14T07:30:00.000Z',
            message: 'no data: Sibyl has no stored price for SOL at 2026-06-14T07:30:00.000Z',
          },
        },
      ]);
    }
  });

  it.each([
    ['a symbol that is none', 'S-O-L@2026-06-15T07:30:00Z', 'invalid_symbol'],
    ['a time that is none', 'SOL@last-tuesday', 'invalid_time'],
    ['a time after now', 'SOL@2026-06-16T00:00:00Z', 'future_time'],
  ])('%s: the output is an error and the resolution completes', async (_name, value, code) => {
    const record = await resolveWith(`[sandbox:price=${value}] [sandbox:evidence=none]`);
    expect(record.status).toBe('COMPLETED');
    expect(record.votes.map((v: { evidence: unknown[] }) => v.evidence)).toEqual(
      Array.from({ length: 4 }, () => [
        {
          kind: 'sibyl',
          tool: 'sibyl_price',
          input: { symbol: value.split('@')[0], at: value.split('@')[1] },
          output: { status: 'error', error: code, message: expect.any(String) },
        },
      ]),
    );
  });

  it('a directive without SYMBOL@TIME is refused at submit: 400, free, as every unreadable directive', async () => {
    const response = await submit(ctx, sandbox.key, {
      question: 'Did SOL trade above 100 USD?',
      outcomes: ['Yes', 'No'],
      callbackUrl: CALLBACK_URL,
      context: '[sandbox:price=SOL]',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details.problems).toEqual([
      { path: 'body.context', message: 'price takes SYMBOL@TIME, e.g. SOL@2026-11-01T12:00:00Z' },
    ]);
  });
});
