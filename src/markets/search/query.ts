import Type, { type Static } from 'typebox';
import { type ValidationProblem, validationError } from '../../errors.js';
import {
  type CursorCodec,
  cursorParameter,
  fingerprint,
  isTimestampKey,
  type Position,
} from '../../http/cursor.js';
import { handlerRules, timestampRules } from '../../http/schemas.js';
import { parseIsoTimestamp } from '../../lib/time.js';
import {
  MARKET_STATUSES,
  type MarketStatus,
  RESOLUTION_TYPES,
  type ResolutionType,
} from '../ingest/events.js';

/** The query of GET /markets and what it means (docs/markets.md#search-and-sort). */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const MAX_Q_LENGTH = 499;
const LISTED_STATUSES = MARKET_STATUSES.filter((s) => s !== 'DRAFT');

export const SORT_KEYS = [
  'createdAt',
  'closesAt',
  'volume',
  'volume24h',
  'liquidity',
  'bettors',
  'relevance',
] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortOrder = 'asc' | 'desc';

/** The default order per sort key: the soonest closing first, the largest (newest, best match) first. */
export const DEFAULT_ORDER: Record<SortKey, SortOrder> = {
  createdAt: 'desc',
  closesAt: 'asc',
  volume: 'desc',
  volume24h: 'desc',
  liquidity: 'desc',
  bettors: 'desc',
  relevance: 'desc',
};

const WALLET_PATTERN = '^[1-9A-HJ-NP-Za-km-z]{32,44}$';

export const ListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Enum(LISTED_STATUSES, { description: `One of ${LISTED_STATUSES.join(', ')}; default: all` }),
    ),
    category: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[^\\u0000-\\u001f\\u007f]+$',
        description: 'Exact category (case-sensitive); default: all',
      }),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_Q_LENGTH,
        ...handlerRules({ pattern: '[\\p{L}\\p{N}]' }),
        description:
          'Full-text search over title, outcome labels, category and description: every word must match, ' +
          'the last one as a prefix (`bitc` finds Bitcoin); case- and language-neutral. At least one letter ' +
          'or digit. Sets the default sort to `relevance`.',
      }),
    ),
    sort: Type.Optional(
      Type.Enum(SORT_KEYS, {
        description:
          'createdAt (default), closesAt, volume (all-time traded value), volume24h (last 24 hours), ' +
          'liquidity (value of open orders), bettors, relevance (the default with q; without q every ' +
          'market ranks 0, so the order is by id)',
      }),
    ),
    order: Type.Optional(
      Type.Enum(['asc', 'desc'], {
        description:
          'Default: asc for closesAt, desc for every other sort; ties go by id in the same direction',
      }),
    ),
    resolutionType: Type.Optional(Type.Enum(RESOLUTION_TYPES)),
    creator: Type.Optional(
      Type.String({ pattern: WALLET_PATTERN, description: 'The creator’s wallet (base58 address)' }),
    ),
    closesAfter: Type.Optional(
      Type.String({
        description: 'Only markets closing at or after this time (ISO 8601)',
        ...timestampRules(),
      }),
    ),
    closesBefore: Type.Optional(
      Type.String({
        description: 'Only markets closing before this time (ISO 8601); not after closesAfter: an empty list',
        ...timestampRules(),
      }),
    ),
    page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 1,
        description: 'Page number; not with cursor',
      }),
    ),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
    cursor: cursorParameter(
      'The `nextCursor` of the previous answer, for the same query (filters, q, sort, order); not with ' +
        'page. Only a cursor the service made is accepted: an altered one, one of another query, or ' +
        '`page` and `cursor` together are 400 VALIDATION_ERROR',
    ),
  },
  { additionalProperties: false },
);
export type ListQueryInput = Static<typeof ListQuery>;

/** A validated list request. `words` is the search (lower-case words), absent without q. */
export interface ListPlan {
  status?: Exclude<MarketStatus, 'DRAFT'> | undefined;
  category?: string | undefined;
  search?: { words: string[]; text: string } | undefined;
  resolutionType?: ResolutionType | undefined;
  creator?: string | undefined;
  closesAfter?: Date | undefined;
  closesBefore?: Date | undefined;
  sort: SortKey;
  order: SortOrder;
  pageSize: number;
  /** Offset paging (the page number), or keyset paging after `after`: exactly one of the two. */
  page: number | null;
  after: Position | null;
  fingerprint: string;
  /**
   * The fingerprint of the filters alone (status, category, the search's words, resolutionType,
   * creator, closesAfter, closesBefore): what `total` depends on, whatever the sort, order or page.
   */
  filterPrint: string;
  /** Whether the request is the spec's list exactly (no new parameter): today's statements answer it. */
  plain: boolean;
}

/** The words of a search: runs of letters and digits, lower-cased (the `simple` configuration does the same). */
export function searchWords(q: string): string[] {
  return (
    q
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** `'a' & 'b' & 'c':*` — every word, the last as a prefix. Words hold letters and digits only. */
export function tsQuery(words: readonly string[]): string {
  return words.map((w, i) => (i === words.length - 1 ? `'${w}':*` : `'${w}'`)).join(' & ');
}

const INTEGER_KEY = /^\d{1,40}$/;
const NUMBER_KEY = /^\d+(\.\d+)?(e[+-]?\d+)?$/;
const MAX_BIGINT = 9_223_372_036_854_775_807n;
/**
 * A relevance is an exact title match (0 or 1) plus a rank below 1, written `0` when nothing ranks;
 * float8 refuses 1e-400 with an error (JavaScript reads it as 0).
 */
const isRelevance = (k: string) => {
  const n = Number(k);
  return k === '0' || (n >= 1e-300 && n < 2);
};

/**
 * The form and range of a cursor's sort key per sort: what the statement casts it to (search/sql.ts)
 * must accept it, since a cast that fails is an error, not an empty page.
 */
export function isSortKey(sort: SortKey): (key: string) => boolean {
  if (sort === 'createdAt' || sort === 'closesAt') return isTimestampKey;
  if (sort === 'relevance') return (k) => NUMBER_KEY.test(k) && isRelevance(k);
  // The bettors' count is a bigint; the volumes and the liquidity are numeric, which takes 40 digits.
  if (sort === 'bettors') return (k) => INTEGER_KEY.test(k) && BigInt(k) <= MAX_BIGINT;
  return (k) => INTEGER_KEY.test(k);
}

export function parseListQuery(query: ListQueryInput, cursors: CursorCodec): ListPlan {
  const problems: ValidationProblem[] = [];
  let search: ListPlan['search'];
  if (query.q !== undefined) {
    const words = searchWords(query.q);
    if (words.length === 0)
      problems.push({ path: 'query.q', message: 'holds no letter or digit to search for' });
    else search = { words, text: query.q.trim() };
  }
  const sort: SortKey = query.sort ?? (query.q !== undefined ? 'relevance' : 'createdAt');
  const time = (field: 'closesAfter' | 'closesBefore') => {
    const text = query[field];
    if (text === undefined) return undefined;
    const parsed = parseIsoTimestamp(text);
    if (!parsed)
      problems.push({ path: `query.${field}`, message: 'is not an ISO 8601 timestamp with a zone' });
    return parsed ?? undefined;
  };
  const closesAfter = time('closesAfter');
  const closesBefore = time('closesBefore');
  if (query.page !== undefined && query.cursor !== undefined)
    problems.push({
      path: 'query.cursor',
      message: 'cannot be combined with page: page by one or the other',
    });
  if (problems.length > 0) throw validationError(problems);

  const order = query.order ?? DEFAULT_ORDER[sort];
  const filters = [
    query.status,
    query.category,
    search ? search.words.join(' ') : undefined,
    query.resolutionType,
    query.creator,
    closesAfter?.getTime(),
    closesBefore?.getTime(),
  ] as const;
  // The cursor's fingerprint keeps its parts and their order as they were: cursors already handed
  // out stay valid.
  const print = fingerprint([
    'markets',
    ...filters.slice(0, 3),
    search?.text.toLowerCase(),
    ...filters.slice(3),
    sort,
    order,
  ]);
  const after = query.cursor === undefined ? null : cursors.decode(query.cursor, print, isSortKey(sort));
  const plain =
    query.q === undefined &&
    query.sort === undefined &&
    query.order === undefined &&
    query.resolutionType === undefined &&
    query.creator === undefined &&
    query.closesAfter === undefined &&
    query.closesBefore === undefined &&
    query.cursor === undefined;
  return {
    status: query.status,
    category: query.category,
    search,
    resolutionType: query.resolutionType,
    creator: query.creator,
    closesAfter,
    closesBefore,
    sort,
    order,
    pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE,
    page: after ? null : (query.page ?? 1),
    after,
    fingerprint: print,
    filterPrint: fingerprint(['markets-total', ...filters]),
    plain,
  };
}
