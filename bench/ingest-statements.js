// Where the database time of one ingestion chunk of trades goes (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep):
// against a database this version has migrated and filled (BENCH_INGEST_DB, e.g. one kept by
// `BENCH_KEEP=1 node bench/ingest-compare.js`), one chunk of CHUNK new trades is recorded RUNS times,
// each time in a transaction that is rolled back, by three variants of the trades statement taken in
// turn: as ingestion runs it (src/markets/ingest/ingest-sql.ts INSERT_TRADES), without its candles
// part, and without its candles part nor the market_trades_at index (dropped inside the transaction);
// after the first, the market stream's writer (recordMarketChanges) for the same trades. Medians of
// the wall time of each statement on one connection (the service's round trip included).
//
// The writer's time is also split by statement (each its round trip; "in Node.js" the rest), through a
// wrapper of the transaction that times each query it is handed. BENCH_OTHER_STREAM=<a built checkout>
// adds that checkout's writer, run beside this one's on the same trades in the same transaction (each
// undone by a savepoint; which goes first alternates): two writers side by side. BENCH_STREAM_WITHOUT
// (below) prices the stream table's indexes.
//
// BENCH_OTHER=<a built checkout> adds, in the same turns, that checkout's INSERT_TRADES (before and
// after a change of the statement, side by side on the same database).
//
//   BENCH_INGEST_DB=postgres://postgres@127.0.0.1:5432/sibyl_ingest_…_after node bench/ingest-statements.js
import { PostgresDatabase } from '../dist/db/postgres.js';
import { INSERT_TRADES } from '../dist/markets/ingest/ingest-sql.js';
import { recordMarketChanges } from '../dist/markets/log/market-log.js';
import { median, randomMint } from './lib.js';

const url = process.env.BENCH_INGEST_DB;
if (!url) throw new Error('BENCH_INGEST_DB: a database this version migrated, with markets ingest-*');
const CHUNK = Number(process.env.CHUNK ?? 1_000);
const RUNS = Number(process.env.RUNS ?? 30);
const HOUR = 3_600_000;

const db = new PostgresDatabase(url, { poolSize: 1 });
const markets = /** @type {{ id: string }[]} */ (await db.query(`SELECT id FROM markets ORDER BY id`)).map(
  (r) => r.id,
);
const [{ newest }] = /** @type {{ newest: Date | null }[]} */ (
  await db.query(`SELECT max(at) AS newest FROM market_trades`)
);
const wallets = Array.from({ length: 200 }, randomMint);
let clock = new Date(newest ?? Date.now()).getTime();
const trades = Array.from({ length: CHUNK }, (_, i) => {
  clock += 10;
  const late = i % 10 === 0;
  return {
    tradeId: `stmt-${i}`,
    marketId: markets[Math.floor((((i * 7919) % CHUNK) / CHUNK) ** 2 * markets.length)],
    outcome: i % 2,
    price: 1_000 + ((i * 37) % 8_000),
    shares: String(1 + i * 1_000),
    buyer: wallets[i % wallets.length],
    seller: wallets[(i * 13) % wallets.length],
    at: new Date(late ? clock - ((i * 7_777_777) % (6 * HOUR)) : clock).toISOString(),
  };
}).sort((a, b) => (a.tradeId < b.tradeId ? -1 : 1));
const params = [
  trades.map((t) => t.tradeId),
  trades.map((t) => t.marketId),
  trades.map((t) => t.outcome),
  trades.map((t) => t.price),
  trades.map((t) => t.shares),
  trades.map((t) => t.buyer),
  trades.map((t) => t.seller),
  trades.map((t) => t.at),
];
const withoutCandles = INSERT_TRADES.text.replace(
  /\), (minutes|candles) AS \([\s\S]*?\), totals AS \(/,
  '), totals AS (',
);
if (withoutCandles === INSERT_TRADES.text) throw new Error('the candles part of INSERT_TRADES was not found');
const variants = [
  { name: 'INSERT_TRADES as ingestion runs it', sql: INSERT_TRADES, stream: true },
  { name: 'without its candles part', sql: { name: 'stmt_no_candles', text: withoutCandles } },
  {
    name: 'without its candles part nor the market_trades_at index',
    sql: { name: 'stmt_no_candles_no_at', text: withoutCandles },
    drop: 'DROP INDEX market_trades_at',
  },
];
if (process.env.BENCH_OTHER) {
  const other = await import(`${process.env.BENCH_OTHER}/dist/markets/ingest/ingest-sql.js`);
  variants.splice(1, 0, {
    name: `INSERT_TRADES of ${process.env.BENCH_OTHER}`,
    sql: { name: 'stmt_other', text: other.INSERT_TRADES.text },
  });
}
const STREAM = 'recordMarketChanges (the market stream) for the same trades';
/** @type {{ name: string, prefix: string, record: typeof recordMarketChanges, drop: string }[]} */
const writers = [{ name: STREAM, prefix: '', record: recordMarketChanges, drop: '' }];
if (process.env.BENCH_OTHER_STREAM) {
  // The writer's place in that checkout: the markets' change log, or the streams' door before it moved.
  const other = await import(`${process.env.BENCH_OTHER_STREAM}/dist/markets/log/market-log.js`).catch(
    () => import(`${process.env.BENCH_OTHER_STREAM}/dist/streams/index.js`),
  );
  writers.push({
    name: `recordMarketChanges of ${process.env.BENCH_OTHER_STREAM}`,
    prefix: 'other_',
    record: other.recordMarketChanges,
    drop: '',
  });
}
// BENCH_STREAM_WITHOUT=<index>,…: this writer again with each of those indexes of the stream's table
// dropped inside the transaction (undone with it), to price what each costs the INSERT.
for (const index of (process.env.BENCH_STREAM_WITHOUT ?? '').split(',').filter(Boolean)) {
  const drop = index.endsWith('_pkey')
    ? `ALTER TABLE market_stream_events DROP CONSTRAINT ${index}`
    : `DROP INDEX ${index}`;
  writers.push({ name: `${STREAM} without ${index}`, prefix: '', record: recordMarketChanges, drop });
}
/** @type {Map<string, number[]>} */
const times = new Map(variants.map((v) => [v.name, []]));
for (const writer of writers) times.set(writer.name, []);
/** @param {string} name @param {number} ms */
const note = (name, ms) => {
  if (!times.has(name)) times.set(name, []);
  times.get(name)?.push(ms);
};
const ROLLBACK = new Error('rollback');
for (let run = 0; run < RUNS + 2; run++) {
  for (const v of variants) {
    await db
      .transaction(async (tx) => {
        if (v.drop) await tx.query(v.drop);
        const started = performance.now();
        const inserted = await tx.query(v.sql, params);
        if (v.stream) await tx.query('SAVEPOINT writer');
        const took = performance.now() - started;
        if (inserted.length !== CHUNK) throw new Error(`${inserted.length} of ${CHUNK} trades inserted`);
        if (run >= 2) note(v.name, took); // the first two runs prepare and warm up
        if (v.stream) {
          for (const writer of run % 2 ? [...writers].reverse() : writers) {
            /** @type {Map<string, number>} */
            const byStatement = new Map();
            const timed = {
              /** @param {string | { name: string, text: string }} q @param {unknown[]} [p] */
              async query(q, p) {
                const at = performance.now();
                const name = typeof q === 'string' ? q : q.name;
                try {
                  // Another build's statements under names of their own (a prepared name is one text).
                  return await tx.query(
                    typeof q === 'string' || !writer.prefix ? q : { ...q, name: `${writer.prefix}${name}` },
                    p,
                  );
                } finally {
                  byStatement.set(name, (byStatement.get(name) ?? 0) + performance.now() - at);
                }
              },
              exec: tx.exec.bind(tx),
            };
            if (writer.drop) await tx.query(writer.drop);
            const streamed = performance.now();
            await writer.record(/** @type {never} a Queryable that times what it runs */ (timed), {
              marketIds: [],
              trades,
            });
            const took = performance.now() - streamed;
            if (run >= 2) {
              note(writer.name, took);
              let inStatements = 0;
              for (const [name, ms] of byStatement) {
                inStatements += ms;
                note(`${writer.name}: ${name}`, ms);
              }
              note(`${writer.name}: in Node.js`, took - inStatements);
            }
            await tx.query('ROLLBACK TO SAVEPOINT writer');
          }
        }
        throw ROLLBACK;
      })
      .catch((err) => {
        if (err !== ROLLBACK) throw err;
      });
  }
}
const [{ n }] = await db.query('SELECT count(*)::int AS n FROM market_trades');
console.log(
  `${CHUNK} trades over ${new Set(trades.map((t) => t.marketId)).size} of ${markets.length} markets (a tenth late by up to 6 h), into ${n} trades; ${RUNS} runs each, medians:`,
);
for (const [name, values] of times) console.log(`- ${name}: ${median(values).toFixed(1)} ms`);
await db.close();
