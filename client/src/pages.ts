import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.js';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
export type JobSummary = Schemas['JobSummary'];
export type Transaction = Schemas['Transaction'];
export type WebhookDeliverySummary = Schemas['WebhookDeliverySummary'];
export type MarketSummary = Schemas['MarketSummary'];
export type MarketTrade = Schemas['MarketTrade'];

type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;

export type JobQuery = Omit<QueryOf<'/api/v1/price/scheduled'>, 'page'>;
export type TransactionQuery = Omit<QueryOf<'/api/v1/account/transactions'>, 'startingAfter'>;
export type DeliveryQuery = Omit<QueryOf<'/api/v1/webhooks/deliveries'>, 'page'>;
export type MarketQuery = Omit<QueryOf<'/api/v1/markets'>, 'page' | 'cursor'>;
export type MarketTradesQuery = Omit<QueryOf<'/api/v1/markets/{id}/trades'>, 'cursor'>;

/** The largest page the service answers (fewest requests per item). */
const PAGE_SIZE = 100;

/**
 * Every item of a list paged by number, first page first. These lists are newest first, so an
 * item created while iterating pushes the older ones down a place: an item seen on one page and
 * again on the next is yielded once. (One removed while iterating, by retention, can move an
 * item onto a page already read: it is then missed. Lists of finished items do not change.)
 */
async function* numberedPages<T>(
  load: (page: number) => Promise<{ items: T[]; total: number; pageSize: number }>,
  idOf: (item: T) => string,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  for (let page = 1; ; page += 1) {
    const { items, total, pageSize } = await load(page);
    for (const item of items) {
      const id = idOf(item);
      if (seen.has(id)) continue;
      seen.add(id);
      yield item;
    }
    if (items.length < pageSize || page * pageSize >= total) return;
  }
}

export interface PageIterators {
  /** Every scheduled job of one kind (`price` or `ai`), newest first: `GET /{kind}/scheduled` page by page. */
  iterateJobs(kind: 'price' | 'ai', query?: JobQuery): AsyncGenerator<JobSummary, void, undefined>;
  /** Every ledger entry, newest first: `GET /account/transactions`, following `nextStartingAfter`. */
  iterateTransactions(query?: TransactionQuery): AsyncGenerator<Transaction, void, undefined>;
  /** Every webhook delivery, newest first: `GET /webhooks/deliveries` page by page. */
  iterateDeliveries(query?: DeliveryQuery): AsyncGenerator<WebhookDeliverySummary, void, undefined>;
  /**
   * Every listed market of a query (search, sort, filters), in its order: `GET /markets`, following
   * `nextCursor`, so a market whose sort key does not change is yielded exactly once however others
   * move (docs/markets.md#cursors). Each page is a paid request (0.05).
   */
  iterateMarkets(query?: MarketQuery): AsyncGenerator<MarketSummary, void, undefined>;
  /**
   * A market's trades, newest first: `GET /markets/{id}/trades`, following `nextCursor` (never a
   * repeat or a skip). Each page is a paid request (0.02); stop early by breaking out of the loop.
   */
  iterateMarketTrades(
    idOrSlug: string,
    query?: MarketTradesQuery,
  ): AsyncGenerator<MarketTrade, void, undefined>;
}

/** Async iterators over the paged lists; an error answer is thrown as a `SibylApiError`. */
export function pageIterators(client: Client<paths>): PageIterators {
  return {
    iterateJobs(kind, query = {}) {
      const pageSize = query.pageSize ?? PAGE_SIZE;
      return numberedPages(
        async (page) => {
          const params = { query: { ...query, pageSize, page } };
          const answer =
            kind === 'price'
              ? await unwrap(client.GET('/api/v1/price/scheduled', { params }))
              : await unwrap(client.GET('/api/v1/ai/scheduled', { params }));
          return { items: answer.jobs, total: answer.total, pageSize };
        },
        (job) => job.jobId,
      );
    },

    async *iterateTransactions(query = {}) {
      const limit = query.limit ?? PAGE_SIZE;
      let startingAfter: string | undefined;
      for (;;) {
        const answer = await unwrap(
          client.GET('/api/v1/account/transactions', {
            params: { query: { ...query, limit, ...(startingAfter ? { startingAfter } : {}) } },
          }),
        );
        yield* answer.transactions;
        if (!answer.hasMore || !answer.nextStartingAfter) return;
        startingAfter = answer.nextStartingAfter;
      }
    },

    iterateDeliveries(query = {}) {
      const pageSize = query.pageSize ?? PAGE_SIZE;
      return numberedPages(
        async (page) => {
          const answer = await unwrap(
            client.GET('/api/v1/webhooks/deliveries', { params: { query: { ...query, pageSize, page } } }),
          );
          return { items: answer.deliveries, total: answer.total, pageSize };
        },
        (delivery) => delivery.id,
      );
    },

    async *iterateMarkets(query = {}) {
      const pageSize = query.pageSize ?? PAGE_SIZE;
      let cursor: string | undefined;
      for (;;) {
        const answer = await unwrap(
          client.GET('/api/v1/markets', {
            params: { query: { ...query, pageSize, ...(cursor ? { cursor } : {}) } },
          }),
        );
        yield* answer.markets;
        if (!answer.nextCursor) return;
        cursor = answer.nextCursor;
      }
    },

    async *iterateMarketTrades(idOrSlug, query = {}) {
      const limit = query.limit ?? PAGE_SIZE;
      let cursor: string | undefined;
      for (;;) {
        const answer = await unwrap(
          client.GET('/api/v1/markets/{id}/trades', {
            params: { path: { id: idOrSlug }, query: { ...query, limit, ...(cursor ? { cursor } : {}) } },
          }),
        );
        yield* answer.trades;
        if (!answer.nextCursor) return;
        cursor = answer.nextCursor;
      }
    },
  };
}
