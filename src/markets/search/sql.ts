import type { ListPlan, SortKey } from './query.js';
import { tsQuery } from './query.js';

/**
 * The list's statements for a search, a sort or a filter beyond the spec's (docs/markets.md#search-and-sort):
 * built per request from a few fixed fragments, every value a parameter. The page is ordered by its
 * sort key and then id, both in the request's direction — except `createdAt`, whose newest-first
 * order breaks ties by id ascending, as the spec's list always has (`asc` is its exact reverse) —
 * and a cursor continues strictly after its (key, id), bounded by the key first so an index on the
 * key starts at the cursor rather than counting up to it.
 */

/** A statement's parameters, in order: `add` gives the placeholder of a new one. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const TIMESTAMP_TEXT = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

interface SortSql {
  /** The key of market `m`. */
  expr: string;
  /** The rows read: `markets m`, and what gives the key. */
  from: string;
  /** The market id, from the table whose index holds the order (a keyset bound then starts its walk). */
  id: string;
  /** The SQL type a cursor's key text is cast to. */
  cast: string;
  /** The key of row `x` as the text a cursor carries. */
  text: (column: string) => string;
}

const numericText = (column: string) => `${column}::text`;

function sortSql(plan: ListPlan, p: Params, now: Date): SortSql {
  const sort: SortKey = plan.sort;
  switch (sort) {
    case 'createdAt':
    case 'closesAt':
      return {
        expr: sort === 'createdAt' ? 'm.created_at' : 'm.closes_at',
        from: 'markets m',
        id: 'm.id',
        cast: 'timestamptz',
        text: (c) => `to_char(${c} AT TIME ZONE 'UTC', ${TIMESTAMP_TEXT})`,
      };
    case 'volume':
      // Every market has its totals row from creation on (migration 0033), and the index
      // market_trade_totals_volume holds exactly this key and then the id: a page is a walk of it
      // from the cursor, each market joined by its primary key.
      return {
        expr: 'floor(tt.notional / 10000)',
        from: 'market_trade_totals tt JOIN markets m ON m.id = tt.market_id',
        id: 'tt.market_id',
        cast: 'numeric',
        text: numericText,
      };
    case 'volume24h': {
      const since = p.add(new Date(now.getTime() - 86_400_000).toISOString());
      return {
        expr: 'floor(COALESCE(v.notional, 0) / 10000)',
        from: `markets m LEFT JOIN (SELECT market_id, sum(shares::numeric * price) AS notional FROM market_trades
                           WHERE at > ${since}::timestamptz GROUP BY market_id) v ON v.market_id = m.id`,
        id: 'm.id',
        cast: 'numeric',
        text: numericText,
      };
    }
    case 'liquidity':
      return {
        expr: 'floor(COALESCE(l.notional, 0) / 10000)',
        from: `markets m LEFT JOIN (SELECT market_id, sum(open_shares::numeric * price) AS notional FROM market_orders
                           WHERE open_shares > 0 GROUP BY market_id) l ON l.market_id = m.id`,
        id: 'm.id',
        cast: 'numeric',
        text: numericText,
      };
    case 'bettors':
      return {
        expr: `(SELECT count(*) FROM (SELECT wallet FROM market_traders WHERE market_id = m.id
                                      UNION
                                      SELECT wallet FROM market_positions WHERE market_id = m.id AND shares > 0) b)`,
        from: 'markets m',
        id: 'm.id',
        cast: 'bigint',
        text: numericText,
      };
    case 'relevance': {
      // Without a search every market ranks the same: the order is by id alone.
      if (!plan.search)
        return { expr: '0::float8', from: 'markets m', id: 'm.id', cast: 'float8', text: numericText };
      const query = p.add(tsQuery(plan.search.words));
      const text = p.add(plan.search.text);
      return {
        // An exact title match (case aside) first, then the weighted rank, bounded below 1.
        expr: `((lower(m.title) = lower(${text}))::int + ts_rank(m.search, to_tsquery('simple', ${query}), 32))::float8`,
        from: 'markets m',
        id: 'm.id',
        cast: 'float8',
        text: numericText,
      };
    }
  }
}

/**
 * The filters of a plan on `markets m`, with their parameters added to `p`; without the search's
 * match when `search` is false (a statement that finds the matches another way).
 */
export function filters(plan: ListPlan, p: Params, search = true): string {
  const where = ["m.status <> 'DRAFT'"];
  if (plan.status !== undefined) where.push(`m.status = ${p.add(plan.status)}`);
  if (plan.category !== undefined) where.push(`m.category = ${p.add(plan.category)}`);
  if (plan.resolutionType !== undefined) where.push(`m.resolution_type = ${p.add(plan.resolutionType)}`);
  if (plan.creator !== undefined) where.push(`m.creator_wallet = ${p.add(plan.creator)}`);
  if (plan.closesAfter) where.push(`m.closes_at >= ${p.add(plan.closesAfter.toISOString())}::timestamptz`);
  if (plan.closesBefore) where.push(`m.closes_at < ${p.add(plan.closesBefore.toISOString())}::timestamptz`);
  if (plan.search && search)
    where.push(`m.search @@ to_tsquery('simple', ${p.add(tsQuery(plan.search.words))})`);
  return where.join(' AND ');
}

/** A list item's columns of market `m`, its sort key as cursor text `sortKey` (the rows `ListRow` reads). */
export function itemColumns(sortKey: string): string {
  return `m.id, m.slug, m.title, m.description, m.category, m.status, m.resolution_type, m.sandbox,
           extract(epoch FROM m.created_at)::float8 * 1000 AS created_ms,
           extract(epoch FROM m.closes_at)::float8 * 1000 AS closes_ms,
           ARRAY(SELECT label FROM market_outcomes o WHERE o.market_id = m.id ORDER BY o.outcome_index)
             AS outcome_labels,
           ${sortKey} AS sort_key`;
}

export interface Built {
  text: string;
  params: unknown[];
}

/**
 * How many markets match the plan's filters (the `total` of every page). Filtered by nothing else
 * than the status and the category, the sum of the counts the database keeps (list-counts.ts);
 * otherwise a count of the matches.
 */
export function countStatement(plan: ListPlan): Built {
  const p = new Params();
  const { search, resolutionType, creator, closesAfter, closesBefore } = plan;
  if (!search && !resolutionType && !creator && !closesAfter && !closesBefore) {
    const where = ["status <> 'DRAFT'"];
    if (plan.status !== undefined) where.push(`status = ${p.add(plan.status)}`);
    if (plan.category !== undefined) where.push(`category = ${p.add(plan.category)}`);
    return {
      text: `SELECT COALESCE(sum(n), 0)::int AS total FROM market_list_counts WHERE ${where.join(' AND ')}`,
      params: p.values,
    };
  }
  return { text: `SELECT count(*)::int AS total FROM markets m WHERE ${filters(plan, p)}`, params: p.values };
}

/**
 * Whether a page of the plan computes the sort key of every match before it keeps one page (a search
 * by relevance, and the keys no index holds): such a page can count the matches in the same pass.
 */
export function ranksEveryMatch(plan: ListPlan): boolean {
  return (
    plan.sort === 'volume24h' ||
    plan.sort === 'liquidity' ||
    plan.sort === 'bettors' ||
    (plan.sort === 'relevance' && plan.search !== undefined)
  );
}

/**
 * One page of the plan, one row more than the page size (to know whether another page follows),
 * each with its sort key as cursor text (`sort_key`). The order and the limit take the (key, id) of
 * the matches alone; the page's columns are read for the rows kept, by primary key. With `withTotal`
 * each row also carries the number of matches (`total`), counted in the same pass as the keys (for
 * the plans of `ranksEveryMatch`, which read every match anyway).
 */
export function pageStatement(plan: ListPlan, now: Date, withTotal = false): Built {
  const p = new Params();
  const key = sortSql(plan, p, now);
  const where = filters(plan, p);
  const desc = plan.order === 'desc';
  // createdAt keeps the spec's tie order: newest first, then id ascending.
  const idDesc = plan.sort === 'createdAt' ? !desc : desc;
  let keyset = '';
  if (plan.after) {
    const k = `${p.add(plan.after.key)}::${key.cast}`;
    const id = p.add(plan.after.id);
    // Key and id in one direction: one row comparison, which a btree on (key, id) takes as the
    // start of its walk. createdAt's mixed order: the key bounds the walk, the id breaks its tie.
    keyset =
      idDesc === desc
        ? `WHERE (y.k, y.id) ${desc ? '<' : '>'} (${k}, ${id})`
        : `WHERE y.k ${desc ? '<=' : '>='} ${k}
             AND (y.k ${desc ? '<' : '>'} ${k} OR y.id ${idDesc ? '<' : '>'} ${id})`;
  }
  const limit = p.add(plan.pageSize + 1);
  const offset = p.add(plan.page === null ? 0 : (plan.page - 1) * plan.pageSize);
  const order = (t: string) => `${t}.k ${desc ? 'DESC' : 'ASC'}, ${t}.id ${idDesc ? 'DESC' : 'ASC'}`;
  const matches = `SELECT ${key.id} AS id, ${key.expr} AS k FROM ${key.from} WHERE ${where}`;
  // The count is a window over every match, before the keyset bound and the limit (a bound on a
  // window's output is not pushed below it: the plans that count walk every match anyway). OFFSET 0
  // keeps the matches a subquery, so the window stores each match's (id, key) and not the row the
  // key was computed from (with the search vector: 12,500 matches spilled to disk at 100,000 markets).
  const rows = withTotal
    ? `(SELECT z.id, z.k, count(*) OVER ()::int AS total FROM (${matches} OFFSET 0) z)`
    : `(${matches})`;
  const text = `
    SELECT ${itemColumns(key.text('x.k'))}${withTotal ? ', x.total' : ''}
      FROM (SELECT y.id, y.k${withTotal ? ', y.total' : ''}
              FROM ${rows} y
             ${keyset}
             ORDER BY ${order('y')}
             LIMIT ${limit} OFFSET ${offset}) x
      JOIN markets m ON m.id = x.id
     ORDER BY ${order('x')}`;
  return { text, params: p.values };
}
