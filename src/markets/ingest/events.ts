import { hash } from 'node:crypto';
import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ValidationProblem } from '../../errors.js';
import { schemaProblems } from '../../http/errors.js';
import { isSolanaAddress } from '../../lib/base58.js';
import { labelKey } from '../../lib/labels.js';
import { illFormedString } from '../../lib/text.js';
import { FIRST_INSTANT_MS, isoUtc, parseIsoTimestamp } from '../../lib/time.js';
import { parseTarget } from '../../prices/index.js';
import { canonicalJson, closedSchema, inOrder, propertyNames } from './canonical-json.js';

/**
 * The ingestion events (docs/markets.md, "Ingestion"): one TypeBox schema per type gives the
 * validation and the TypeScript type. Fields the schemas cannot express (timestamps, wallet
 * checksums, amounts beyond int8, outcome counts) are checked in `parseEventLine`.
 */

export const MARKET_STATUSES = ['DRAFT', 'OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED'] as const;
export type MarketStatus = (typeof MARKET_STATUSES)[number];
export const RESOLUTION_TYPES = ['PRICE_FEED', 'AI', 'ADMIN', 'MANUAL_VOTE'] as const;
export type ResolutionType = (typeof RESOLUTION_TYPES)[number];
export const MAX_OUTCOMES = 20;

const INT8_MAX = 9_223_372_036_854_775_807n;
const MAX_DETAILS_CHARS = 10_000;

/** Event ids, order ids and trade ids: printable ASCII without spaces. */
const OpaqueId = Type.String({ minLength: 1, maxLength: 200, pattern: '^[!-~]+$' });
/** Market ids appear in URLs: letters, digits and `_.:-`. */
const MarketId = Type.String({ maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' });
const Slug = Type.String({ maxLength: 160, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
const Line = (max: number, min = 1) =>
  Type.String({ minLength: min, maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
/** Multi-line text: newlines and tabs allowed, other control characters (NUL included) not. */
const Text = Type.String({
  maxLength: 10_000,
  pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$',
});
const Wallet = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' });
const Username = Type.Union([Line(64), Type.Null()]);
/** Integer amounts as strings (base units or lamports), as large as PostgreSQL's bigint. */
const Amount = Type.String({ maxLength: 19, pattern: '^(0|[1-9][0-9]*)$' });
const Bps = Type.Integer({ minimum: 0, maximum: 10_000 });
const OutcomeIndex = Type.Integer({ minimum: 0, maximum: MAX_OUTCOMES - 1 });
const IsoText = Type.String({ maxLength: 40 });

function envelope<T extends string>(type: T) {
  return { id: OpaqueId, type: Type.Literal(type), at: IsoText };
}

const strict = { additionalProperties: false } as const;

const MarketCreated = Type.Object(
  {
    ...envelope('market.created'),
    sandbox: Type.Optional(Type.Boolean()),
    market: Type.Object(
      {
        id: MarketId,
        slug: Slug,
        title: Line(300),
        description: Text,
        category: Line(64),
        imageUrl: Type.Optional(Type.Union([Line(2048, 0), Type.Null()])),
        marketType: Type.Enum(['BINARY', 'CATEGORICAL']),
        outcomes: Type.Array(Line(200), { minItems: 2, maxItems: MAX_OUTCOMES }),
        closesAt: IsoText,
        feeBps: Bps,
        lockPeriodSeconds: Type.Integer({ minimum: 0, maximum: 315_360_000 }),
        creator: Type.Object({ wallet: Wallet, username: Type.Optional(Username) }, strict),
        resolution: Type.Object(
          {
            type: Type.Enum(RESOLUTION_TYPES),
            symbol: Type.Optional(Type.String({ maxLength: 44 })),
            condition: Type.Optional(Type.Enum(['above', 'below'])),
            targetPrice: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1e15 })),
            tolerance: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
          },
          strict,
        ),
      },
      strict,
    ),
  },
  strict,
);

const MarketStatusChanged = Type.Object(
  { ...envelope('market.status'), marketId: MarketId, status: Type.Enum(MARKET_STATUSES) },
  strict,
);

const MarketResolved = Type.Object(
  {
    ...envelope('market.resolved'),
    marketId: MarketId,
    winningOutcomeIndex: OutcomeIndex,
    details: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
  },
  strict,
);

const OrderPlaced = Type.Object(
  {
    ...envelope('order.placed'),
    marketId: MarketId,
    orderId: OpaqueId,
    wallet: Wallet,
    outcome: OutcomeIndex,
    side: Type.Enum(['bid', 'ask']),
    price: Bps,
    shares: Amount,
  },
  strict,
);

const orderUpdate = <T extends 'order.filled' | 'order.cancelled'>(type: T) =>
  Type.Object(
    {
      ...envelope(type),
      orderId: OpaqueId,
      shares: Type.Optional(Amount),
    },
    strict,
  );
const OrderFilled = orderUpdate('order.filled');
const OrderCancelled = orderUpdate('order.cancelled');

const Trade = Type.Object(
  {
    ...envelope('trade'),
    marketId: MarketId,
    tradeId: OpaqueId,
    outcome: OutcomeIndex,
    price: Bps,
    shares: Amount,
    buyer: Wallet,
    seller: Wallet,
  },
  strict,
);

const Position = Type.Object(
  {
    ...envelope('position'),
    marketId: MarketId,
    wallet: Wallet,
    outcome: OutcomeIndex,
    shares: Amount,
    wagered: Amount,
  },
  strict,
);

const Stake = Type.Object(
  {
    ...envelope('stake'),
    marketId: MarketId,
    wallet: Wallet,
    username: Type.Optional(Username),
    amount: Amount,
  },
  strict,
);

const SCHEMAS = {
  'market.created': MarketCreated,
  'market.status': MarketStatusChanged,
  'market.resolved': MarketResolved,
  'order.placed': OrderPlaced,
  'order.filled': OrderFilled,
  'order.cancelled': OrderCancelled,
  trade: Trade,
  position: Position,
  stake: Stake,
} as const;

export type EventType = keyof typeof SCHEMAS;
export const EVENT_TYPES = Object.keys(SCHEMAS) as EventType[];

export type MarketEvent =
  | Static<typeof MarketCreated>
  | Static<typeof MarketStatusChanged>
  | Static<typeof MarketResolved>
  | Static<typeof OrderPlaced>
  | Static<typeof OrderFilled>
  | Static<typeof OrderCancelled>
  | Static<typeof Trade>
  | Static<typeof Position>
  | Static<typeof Stake>;

export type EventOf<T extends EventType> = Extract<MarketEvent, { type: T }>;

const CHECKS = Object.fromEntries(
  Object.entries(SCHEMAS).map(([type, schema]) => [type, Compile(schema as TSchema)]),
) as Record<EventType, ReturnType<typeof Compile>>;

/** An event that passed validation, with what ingestion needs besides its fields. */
export interface ParsedEvent {
  /** 1-based line number in the body or file. */
  line: number;
  event: MarketEvent;
  /** `at` rendered to microseconds (PostgreSQL's precision), the form stored and compared. */
  at: string;
  /** `at` in microseconds since the epoch, for ordering in memory exactly as the database does. */
  atMicros: number;
  /** SHA-256 of the event's canonical JSON (keys sorted), in hex: what "the same body" means. */
  sha256: string;
}

export type LineParse =
  | { ok: true; parsed: ParsedEvent }
  | { ok: false; line: number; eventId: string | null; problems: ValidationProblem[] };

/** `toISOString`'s form (UTC, milliseconds): what nearly every feed sends. */
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * ISO 8601 with a zone → microseconds since the epoch and the canonical text; null if malformed.
 * Text already in `toISOString`'s form is its own canonical text once its three extra digits are
 * added: read without the second pattern and the rendering back (docs/performance.md#the-parse-of-an-ingestion-line).
 */
export function toMicros(text: string): { micros: number; iso: string } | null {
  if (ISO_MILLIS.test(text)) {
    // Valid exactly when it is what `toISOString` writes for the instant it names: an impossible
    // date (February 30th, hour 24) names another day, or nothing; the year 0000 is not one.
    const ms = Date.parse(text);
    return ms >= FIRST_INSTANT_MS && isoUtc(ms) === text
      ? { micros: ms * 1000, iso: `${text.slice(0, 23)}000Z` }
      : null;
  }
  const date = parseIsoTimestamp(text);
  if (!date) return null;
  // The fraction's digits as sent (offsets are whole minutes): exact, where digits computed back
  // from `micros` are not beyond 2^53 µs (the year 2255) nor, by `%`, before 1970.
  const fraction = (/T\d{2}:\d{2}(?::\d{2})?\.(\d+)/.exec(text)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  const second = Math.floor(date.getTime() / 1000);
  const micros = second * 1_000_000 + Number(fraction);
  return { micros, iso: `${new Date(second * 1000).toISOString().slice(0, 19)}.${fraction}Z` };
}

/**
 * Per type whose every object is closed, the sorted names of every property its schema allows, for
 * `inOrder` (docs/performance.md#the-parse-of-an-ingestion-line); null for a type with an open
 * object (a resolution's `details` may hold any property), whose events go through `canonicalJson`.
 */
const SORTED_NAMES = Object.fromEntries(
  Object.entries(SCHEMAS).map(([type, schema]) => [
    type,
    closedSchema(schema as TSchema) ? [...propertyNames(schema as TSchema)].sort() : null,
  ]),
) as Record<EventType, string[] | null>;

/** The SHA-256 (hex) of a validated event's canonical JSON: keys sorted at every depth. */
function bodyHash(event: MarketEvent): string {
  const names = SORTED_NAMES[event.type];
  return hash('sha256', names ? JSON.stringify(inOrder(event, names)) : canonicalJson(event));
}

function amountProblems(event: Record<string, unknown>): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const field of ['shares', 'wagered', 'amount'] as const) {
    const value = event[field];
    if (typeof value === 'string' && BigInt(value) > INT8_MAX)
      problems.push({ path: `event.${field}`, message: `must be at most ${INT8_MAX}` });
  }
  if ((event.type === 'order.placed' || event.type === 'trade') && event.shares === '0')
    problems.push({ path: 'event.shares', message: 'must be greater than 0' });
  return problems;
}

/**
 * Addresses already found valid: a feed names the same wallets again and again, and decoding one
 * (base58 to 32 bytes) was a fifth of the parse's time (docs/performance.md#the-parse-of-an-ingestion-line).
 * Emptied when full, so it holds at most VALID_WALLETS_MAX.
 */
const validWallets = new Set<string>();
const VALID_WALLETS_MAX = 100_000;

function validWallet(wallet: string): boolean {
  if (validWallets.has(wallet)) return true;
  if (!isSolanaAddress(wallet)) return false;
  if (validWallets.size >= VALID_WALLETS_MAX) validWallets.clear();
  validWallets.add(wallet);
  return true;
}

function walletProblems(event: MarketEvent): ValidationProblem[] {
  const wallets: [string, string][] = [];
  if (event.type === 'market.created')
    wallets.push(['event.market.creator.wallet', event.market.creator.wallet]);
  if (event.type === 'trade') wallets.push(['event.buyer', event.buyer], ['event.seller', event.seller]);
  if (event.type === 'order.placed' || event.type === 'position' || event.type === 'stake')
    wallets.push(['event.wallet', event.wallet]);
  return wallets
    .filter(([, wallet]) => !validWallet(wallet))
    .map(([path]) => ({ path, message: 'must be a base58 Solana address (32 bytes)' }));
}

function marketProblems(event: EventOf<'market.created'>): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const { market } = event;
  if (!parseIsoTimestamp(market.closesAt))
    problems.push({ path: 'event.market.closesAt', message: 'must be ISO 8601 with a zone' });
  // Distinct as the AI resolution counts them: not only by case, invisible or look-alike characters.
  if (new Set(market.outcomes.map(labelKey)).size !== market.outcomes.length)
    problems.push({ path: 'event.market.outcomes', message: 'must be distinct labels' });
  if (market.marketType === 'BINARY' && market.outcomes.length !== 2)
    problems.push({ path: 'event.market.outcomes', message: 'a BINARY market has exactly 2 outcomes' });
  const r = market.resolution;
  const feedFields = ['symbol', 'condition', 'targetPrice', 'tolerance'] as const;
  if (r.type === 'PRICE_FEED') {
    for (const f of feedFields)
      if (r[f] === undefined) problems.push({ path: `event.market.resolution.${f}`, message: 'is required' });
    if (r.symbol !== undefined && parseTarget(r.symbol).kind !== 'target')
      problems.push({ path: 'event.market.resolution.symbol', message: 'is not a known symbol or a mint' });
    if (market.marketType !== 'BINARY')
      problems.push({ path: 'event.market.marketType', message: 'a PRICE_FEED market is BINARY (Yes, No)' });
  } else {
    for (const f of feedFields)
      if (r[f] !== undefined)
        problems.push({ path: `event.market.resolution.${f}`, message: 'only PRICE_FEED markets have it' });
  }
  return problems;
}

/**
 * One NDJSON line → a validated event, or every problem found in it. Never throws: a bad line is
 * reported by its number and the others go on.
 */
export function parseEventLine(text: string, line: number): LineParse {
  const refuse = (problems: ValidationProblem[], eventId: string | null = null): LineParse => ({
    ok: false,
    line,
    eventId,
    problems,
  });
  // PostgreSQL cannot store NUL in text; JSON can carry it raw (invalid JSON) or escaped.
  const hasNul = text.includes('\u0000') || /\\u0000/i.test(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refuse([{ path: 'event', message: hasNul ? 'contains a NUL character' : 'is not valid JSON' }]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return refuse([{ path: 'event', message: 'must be a JSON object' }]);
  const record = value as Record<string, unknown>;
  const id = record.id;
  const eventId = typeof id === 'string' && id.length <= 200 && !id.includes('\u0000') ? id : null;
  if (hasNul) return refuse([{ path: 'event', message: 'contains a NUL character' }], eventId);
  // A lone surrogate (`\ud800`) would be stored as U+FFFD: refused, like any text that cannot be kept as sent.
  const illFormed = illFormedString(text, value, 'event');
  if (illFormed) return refuse([illFormed], eventId);
  const type = record.type;
  if (typeof type !== 'string' || !(type in SCHEMAS)) {
    return refuse([{ path: 'event.type', message: `must be one of: ${EVENT_TYPES.join(', ')}` }], eventId);
  }
  const check = CHECKS[type as EventType];
  if (!check.Check(value)) return refuse(schemaProblems('event', [...check.Errors(value)] as never), eventId);
  const event = value as MarketEvent;
  const problems = [...amountProblems(record), ...walletProblems(event)];
  const at = toMicros(event.at);
  if (!at) problems.push({ path: 'event.at', message: 'must be ISO 8601 with a zone' });
  if (event.type === 'market.created') problems.push(...marketProblems(event));
  if (event.type === 'market.resolved' && event.details) {
    if (JSON.stringify(event.details).length > MAX_DETAILS_CHARS)
      problems.push({
        path: 'event.details',
        message: `must be at most ${MAX_DETAILS_CHARS} characters of JSON`,
      });
  }
  if (problems.length > 0 || !at) return refuse(problems, eventId);
  return { ok: true, parsed: { line, event, at: at.iso, atMicros: at.micros, sha256: bodyHash(event) } };
}
