import type { MarketFacts, SibylData, StoredPrice } from './port.js';

/**
 * One resolution's reads of Sibyl's data, shared by its four models (docs/ai.md#sibyls-tools): the
 * models of one question mostly ask for the same price or market, often at the same moment, and
 * each such read is one statement the first asker starts and the others wait for. A read that
 * fails is forgotten, so a later call reads again rather than repeat the failure. Each call still
 * gets its own answer and its own evidence item; only the database read is shared.
 */
export function sharedReads(data: SibylData): SibylData {
  const prices = new Map<string, Promise<StoredPrice>>();
  const markets = new Map<string, Promise<MarketFacts | null>>();
  const once = <T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> => {
    const known = cache.get(key);
    if (known) return known;
    const started = read();
    cache.set(key, started);
    started.catch(() => cache.delete(key));
    return started;
  };
  return {
    price: (symbol, at) => once(prices, `${at.getTime()} ${symbol}`, () => data.price(symbol, at)),
    market: (id) => once(markets, id, () => data.market(id)),
  };
}
