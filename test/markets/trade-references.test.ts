import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

/**
 * The references of trades, candles and traders, checked once per statement (migration 0041,
 * docs/performance.md#trade-references-per-statement) where foreign keys checked each row: a row
 * naming an outcome or market that does not exist is refused with the statement's other rows, and
 * an outcome or market that rows refer to cannot be deleted or truncated away.
 */

let database: TestDatabase;

const count = async (table: string): Promise<number> =>
  (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n ?? -1;

beforeAll(async () => {
  database = await createTestDatabase();
  const result = await ingestText(
    database.db,
    ndjson([
      marketCreated({ id: 'ref-traded' }),
      marketCreated({ id: 'ref-quiet' }),
      event('trade', '2026-03-01T12:00:00Z', {
        marketId: 'ref-traded',
        tradeId: 'ref-t1',
        outcome: 1,
        price: 4000,
        shares: '10',
        buyer: wallet('a'),
        seller: wallet('b'),
      }),
    ]),
  );
  expect(result).toMatchObject({ applied: 3, refused: 0 });
});
afterAll(async () => {
  await database.close();
});

const TRADE = `INSERT INTO market_trades (trade_id, market_id, outcome_index, price, shares, buyer, seller, at)
               VALUES ($1, $2, $3, 5000, 1, 'x', 'y', now()), ($4, $5, $6, 5000, 1, 'x', 'y', now())`;

describe('trade references', () => {
  it('refuse a statement whose trades name an outcome or market that does not exist, all of its rows', async () => {
    const before = await count('market_trades');
    // A good row and an outcome the market does not have: neither is recorded.
    await expect(
      database.db.query(TRADE, ['ref-ok-1', 'ref-traded', 0, 'ref-bad-1', 'ref-traded', 2]),
    ).rejects.toThrow(/market_trades row refers to an outcome that does not exist/);
    await expect(
      database.db.query(TRADE, ['ref-ok-2', 'ref-quiet', 1, 'ref-bad-2', 'nowhere', 0]),
    ).rejects.toThrow(/outcome that does not exist/);
    expect(await count('market_trades')).toBe(before);
    // Both rows good: recorded.
    await database.db.query(TRADE, ['ref-ok-3', 'ref-traded', 0, 'ref-ok-4', 'ref-quiet', 1]);
    expect(await count('market_trades')).toBe(before + 2);
  });

  it('refuse candles of an unknown outcome and traders of an unknown market', async () => {
    await expect(
      database.db.query(
        `INSERT INTO market_candles (market_id, outcome_index, width, bucket, open, high, low, close, volume,
                                     trades, open_at, open_trade, close_at, close_trade)
         VALUES ('ref-traded', 3, 60, now(), 1, 1, 1, 1, 1, 1, now(), 't', now(), 't')`,
      ),
    ).rejects.toThrow(/market_candles row refers to an outcome that does not exist/);
    await expect(
      database.db.query(
        `INSERT INTO market_traders (market_id, wallet) VALUES ('ref-quiet', 'w'), ('nowhere', 'w')`,
      ),
    ).rejects.toThrow(/market_traders row refers to a market that does not exist/);
    await database.db.query(`INSERT INTO market_traders (market_id, wallet) VALUES ('ref-quiet', 'w')`);
  });

  it('keep an outcome with trades, and a market with traders, from being deleted or truncated', async () => {
    await expect(
      database.db.query(`DELETE FROM market_outcomes WHERE market_id = 'ref-traded' AND outcome_index = 1`),
    ).rejects.toThrow(/outcome 1 of market ref-traded has trades or candles: it cannot be deleted/);
    // ref-quiet's outcomes 1 has a trade (the test above) and it has a trader: its market stays too.
    await expect(
      database.db.transaction(async (tx) => {
        await tx.query(`DELETE FROM market_trades WHERE market_id = 'ref-quiet'`);
        await tx.query(`DELETE FROM market_outcomes WHERE market_id = 'ref-quiet'`);
        await tx.query(`DELETE FROM market_trade_totals WHERE market_id = 'ref-quiet'`);
        await tx.query(`DELETE FROM markets WHERE id = 'ref-quiet'`);
      }),
    ).rejects.toThrow(/market ref-quiet has traders: it cannot be deleted/);
    await expect(database.db.query('TRUNCATE markets CASCADE')).rejects.toThrow(
      /cannot be truncated while .* refer/,
    );
    expect(await count('markets')).toBe(2);
    expect(await count('market_outcomes')).toBe(4);
  });

  it('still let a market without trades or traders be deleted', async () => {
    await ingestText(database.db, ndjson([marketCreated({ id: 'ref-gone' })]));
    await database.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM market_outcomes WHERE market_id = 'ref-gone'`);
      await tx.query(`DELETE FROM market_trade_totals WHERE market_id = 'ref-gone'`);
      await tx.query(`DELETE FROM markets WHERE id = 'ref-gone'`);
    });
    expect(await count('markets')).toBe(2);
  });
});
