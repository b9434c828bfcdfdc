import type { AccountMode } from '../../accounts/index.js';
import type { Queryable } from '../../db/database.js';
import type { CursorCodec } from '../../http/cursor.js';
import type { MarketStatus } from '../ingest/events.js';
import * as sql from '../read/sql.js';
import type { MarketListBody } from '../schemas.js';
import { type OneWordRow, oneWordCount, oneWordStatement } from './one-word.js';
import type { ListPlan } from './query.js';
import { type Built, countStatement, pageStatement, ranksEveryMatch } from './sql.js';
import { lamportsUsd, pageStats } from './stats.js';

interface ListRow {
  total?: number;
  id: string | null;
  slug: string;
  title: string;
  description: string;
  category: string;
  status: MarketStatus;
  resolution_type: MarketListBody['markets'][number]['resolutionType'];
  created_ms: number;
  closes_ms: number;
  sandbox: boolean;
  outcome_labels: string[];
  sort_key: string;
}

export interface ListDeps {
  db: Queryable;
  now: Date;
  /** Signs the page's `nextCursor`. */
  cursors: CursorCodec;
  /** The SOL price in USD of a mode, null when there is none now. */
  solUsd(mode: AccountMode): Promise<number | null>;
  /**
   * The `total` per filter set, kept until the list changes (a ListCache: docs/markets.md#total);
   * absent: every page counts its matches.
   */
  totals?: TotalCache | undefined;
}

export interface TotalCache {
  get(key: string, load: () => Promise<number>): Promise<number>;
}

/**
 * The spec's list (no new parameter): today's statements, one per combination of filters, each
 * counting the matches with its page — or, when the total is kept, the same page without the count.
 */
async function plainPage(
  deps: ListDeps,
  plan: ListPlan,
): Promise<{ rows: ListRow[]; total: number; more: boolean }> {
  const { status, category, pageSize } = plan;
  const page = plan.page ?? 1;
  const paging = [pageSize, (page - 1) * pageSize];
  const read = (set: typeof sql.LIST) =>
    status !== undefined && category !== undefined
      ? deps.db.query<ListRow>(set.statusAndCategory, [...paging, status, category])
      : status !== undefined
        ? deps.db.query<ListRow>(set.status, [...paging, status])
        : category !== undefined
          ? deps.db.query<ListRow>(set.category, [...paging, category])
          : deps.db.query<ListRow>(set.all, paging);
  let rows: ListRow[] | undefined;
  const counted = async () => {
    rows = await read(sql.LIST);
    return rows[0]?.total ?? 0;
  };
  const total = deps.totals ? await deps.totals.get(plan.filterPrint, counted) : await counted();
  rows ??= await read(sql.LIST_PAGE);
  const listed = rows.filter((r) => r.id !== null);
  return { rows: listed, total, more: total > (page - 1) * pageSize + listed.length };
}

async function builtPage(
  deps: ListDeps,
  plan: ListPlan,
): Promise<{ rows: ListRow[]; total: number; more: boolean }> {
  const { db, now, totals } = deps;
  const read = (withTotal: boolean) => {
    const page = pageStatement(plan, now, withTotal);
    return db.query<ListRow>(page.text, page.params);
  };
  const count = async () => {
    // A one-word count from its index answers null when the prefix names several lexemes.
    const totalOf = async (statement: Built | null) =>
      statement
        ? (await db.query<{ total: number | null }>(statement.text, statement.params))[0]?.total
        : null;
    return (await totalOf(oneWordCount(plan))) ?? (await totalOf(countStatement(plan))) ?? 0;
  };
  const total = (load: () => Promise<number>) => (totals ? totals.get(plan.filterPrint, load) : load());
  let rows: ListRow[];
  let counted: number;
  const oneWord = oneWordStatement(plan);
  const top = oneWord ? await db.query<ListRow & OneWordRow>(oneWord.text, oneWord.params) : [];
  if (top[0]?.single) {
    // The top of the one-word index (docs/markets.md#one-word-search): the matches are not all
    // read, so they are counted apart, or the kept count serves.
    rows = top.filter((r) => r.id !== null);
    counted = await total(count);
  } else if (ranksEveryMatch(plan)) {
    // The page reads every match for its keys and counts them in the same pass (a page past the end
    // has no row to carry the count: then the kept or counted total). The window also keeps the
    // statement serial: without it PostgreSQL ran a one-word search with two parallel workers,
    // slower at 5 connections on 2 cores (docs/performance.md#market-data-at-scale).
    rows = await read(true);
    counted = rows[0]?.total ?? (await total(count));
  } else {
    // The page walks an index from its cursor; the count reads every match: side by side.
    [rows, counted] = await Promise.all([read(false), total(count)]);
  }
  return {
    rows: rows.slice(0, plan.pageSize),
    total: counted,
    more: rows.length > plan.pageSize,
  };
}

/** One page of the list as the plan asks, with the items' statistics and the next page's cursor. */
export async function readList(deps: ListDeps, plan: ListPlan): Promise<MarketListBody> {
  const { rows, total, more } = plan.plain ? await plainPage(deps, plan) : await builtPage(deps, plan);
  const stats = await pageStats(
    deps.db,
    rows.map((r) => ({ id: r.id as string, outcomeCount: r.outcome_labels.length })),
    deps.now,
  );
  const modes = new Set<AccountMode>(rows.map((r) => (r.sandbox ? 'sandbox' : 'live')));
  const sol = new Map<AccountMode, number | null>();
  await Promise.all([...modes].map(async (mode) => sol.set(mode, await deps.solUsd(mode))));
  const markets = rows.map((r) => {
    const id = r.id as string;
    const s = stats.get(id);
    const solUsd = sol.get(r.sandbox ? 'sandbox' : 'live') ?? null;
    return {
      id,
      slug: r.slug,
      title: r.title,
      description: r.description,
      category: r.category,
      status: r.status,
      resolutionType: r.resolution_type,
      outcomes: r.outcome_labels.map((label, index) => ({
        index,
        label,
        lastPrice: s?.outcomes[index]?.lastPrice ?? null,
        probability: s?.outcomes[index]?.probability ?? 0,
      })),
      createdAt: new Date(r.created_ms).toISOString(),
      closesAt: new Date(r.closes_ms).toISOString(),
      sandbox: r.sandbox,
      volumeUsd: lamportsUsd(s?.volume ?? '0', solUsd),
      volume24hUsd: lamportsUsd(s?.volume24h ?? '0', solUsd),
      liquidityUsd: lamportsUsd(s?.liquidity ?? '0', solUsd),
    };
  });
  const last = rows[rows.length - 1];
  const nextCursor =
    more && last
      ? deps.cursors.encode({ key: last.sort_key, id: last.id as string }, plan.fingerprint)
      : null;
  return { markets, total, page: plan.page, pageSize: plan.pageSize, nextCursor };
}
