import type { ListPlan } from './query.js';
import { tsQuery } from './query.js';
import { type Built, filters, itemColumns, Params } from './sql.js';

/**
 * A one-word search by relevance as the top of an index (docs/markets.md#one-word-search).
 *
 * The word is a prefix: every lexeme that starts with it matches, and a market's rank sums what each
 * of its matching lexemes gives (PostgreSQL's `ts_rank`). When the prefix names a single lexeme of
 * the whole corpus — `market_search_terms` holds every market's lexemes (migration 0036) — each
 * match's rank is that lexeme's row, which holds the same float4 as `ts_rank` of the general
 * statement (src/markets/search/sql.ts), and a page is a walk of the index (lexeme, rank, market)
 * from its cursor: the matches ranked before it are never read. The exact title (case aside), which
 * ranks 1 above every other, comes from the title's own index. One statement decides and reads, in
 * one snapshot: its first column says whether the prefix named one lexeme; when it did not (or the
 * database lower-cases the word otherwise than the service), the caller reads the general statement.
 */

export interface OneWordRow {
  single: boolean | null;
}

/** The first code point after `word`'s last: the end of the range of every text starting with `word`. */
function rangeEnd(word: string): string {
  const chars = [...word];
  const last = chars.pop() as string;
  return chars.join('') + String.fromCodePoint((last.codePointAt(0) as number) + 1);
}

/**
 * The count of a one-word search whose only other filter is the status, from the index alone, when
 * the word's prefix names one lexeme of the corpus: the markets holding it are that lexeme's rows
 * (PostgreSQL's prefix match compares bytes, as the range does). `total` is null when the prefix names
 * several lexemes or none: then the general count answers. Null for another plan, and for a word that
 * is not plain ASCII letters and digits (which PostgreSQL might lower-case otherwise).
 */
export function oneWordCount(plan: ListPlan): Built | null {
  const word = plan.search?.words.length === 1 ? plan.search.words[0] : undefined;
  if (word === undefined || !/^[a-z0-9]+$/.test(word)) return null;
  const others = [plan.category, plan.resolutionType, plan.creator, plan.closesAfter, plan.closesBefore];
  if (others.some((f) => f !== undefined)) return null;
  const p = new Params();
  const from = p.add(word);
  const to = p.add(rangeEnd(word));
  const status = plan.status === undefined ? '' : `AND t.status = ${p.add(plan.status)}`;
  return {
    text: `WITH probe AS MATERIALIZED (
             SELECT min(lexeme) AS lo, max(lexeme) AS hi FROM market_search_terms
              WHERE lexeme >= ${from} AND lexeme < ${to}
           )
           SELECT CASE WHEN pr.lo = pr.hi THEN
                    (SELECT count(*)::int FROM market_search_terms t
                      WHERE t.lexeme = pr.lo AND t.status <> 'DRAFT' ${status})
                  END AS total
             FROM probe pr`,
    params: p.values,
  };
}

/** The statement, or null when the plan is not a one-word search by relevance. */
export function oneWordStatement(plan: ListPlan): Built | null {
  const search = plan.search;
  const word = search?.words.length === 1 ? search.words[0] : undefined;
  if (plan.sort !== 'relevance' || search === undefined || word === undefined) return null;
  const p = new Params();
  const from = p.add(word);
  const to = p.add(rangeEnd(word));
  const query = p.add(tsQuery(search.words));
  const title = p.add(search.text);
  const where = filters(plan, p, false);
  const desc = plan.order === 'desc';
  const before = desc ? '<' : '>';
  const direction = desc ? 'DESC' : 'ASC';
  let exactAfter = '';
  let restAfter = '';
  if (plan.after) {
    const key = p.add(plan.after.key);
    const id = p.add(plan.after.id);
    exactAfter = `AND (x.k, x.id) ${before} (${key}::float8, ${id})`;
    // A key below 1 is a rank as float8: cast back to float4, exactly the row's rank. A key of 1 or
    // more is an exact title's, above every other rank (and cast to float4 it still is).
    restAfter = `AND (t.rank, t.market_id) ${before} (${key}::float8::real, ${id})`;
  }
  const limit = p.add(plan.pageSize + 1);
  const offset = p.add(plan.page === null ? 0 : (plan.page - 1) * plan.pageSize);
  // The general statement's key, to the bit: ts_rank there is this row's rank here.
  const key = `((lower(m.title) = lower(${title}))::int + t.rank)::float8`;
  const text = `
    WITH probe AS MATERIALIZED (
      SELECT min(lexeme) AS lo, max(lexeme) AS hi,
             querytree(to_tsquery('simple', ${query})) = ${query} AS same
        FROM market_search_terms WHERE lexeme >= ${from} AND lexeme < ${to}
    )
    SELECT pr.lo = pr.hi AND pr.same AS single, page.*
      FROM probe pr
      LEFT JOIN LATERAL (
        SELECT ${itemColumns('x.k::text')}
          FROM (SELECT y.id, y.k FROM (
                  (SELECT x.id, x.k FROM (
                     SELECT m.id, ${key} AS k
                       FROM markets m JOIN market_search_terms t ON t.market_id = m.id AND t.lexeme = pr.lo
                      WHERE lower(m.title) = lower(${title}) AND ${where}) x
                    WHERE true ${exactAfter}
                    ORDER BY x.k ${direction}, x.id ${direction} LIMIT ${limit}::int + ${offset}::int)
                  UNION ALL
                  (SELECT t.market_id, ${key}
                     FROM market_search_terms t JOIN markets m ON m.id = t.market_id
                    WHERE t.lexeme = pr.lo AND lower(m.title) <> lower(${title}) AND ${where} ${restAfter}
                    ORDER BY t.rank ${direction}, t.market_id ${direction} LIMIT ${limit}::int + ${offset}::int)
                ) y
                ORDER BY y.k ${direction}, y.id ${direction} LIMIT ${limit} OFFSET ${offset}) x
          JOIN markets m ON m.id = x.id
         ORDER BY x.k ${direction}, x.id ${direction}
      ) page ON pr.lo = pr.hi AND pr.same`;
  return { text, params: p.values };
}
