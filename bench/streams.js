// `npm run bench:streams`: live-data streams on PostgreSQL, one `sibyl serve` process (its memory
// sampled after a GC by bench/memory-probe.js), the clients in this process.
//   prices  — PRICE_STREAMS price streams over the sandbox feed's symbols (10: the only ones it
//             prices without network venues), each VWAP change (the feed moves every 10 s) from its
//             computation (`resolutionTimestamp`) to receipt, p50/p99;
//   markets — MARKET_STREAMS market streams over MARKETS markets; trades ingested by this process at
//             TRADE_RATE/s, each from the start of its ingestion (its transaction included) to receipt
//             at every subscriber, p50/p99;
//   memory per open stream (RSS after a GC, all streams open minus none), the service's CPU per
//   delivered event; the billed single price (GET /price/SOL) per second with the streams open beside
//   it vs without (the ratio); NEVER_READING clients of a busy market stream that never read: RSS
//   before and after.
// Prints a Markdown table; figures go to docs/performance.md.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { ingestText } from '../dist/markets/ingest/ingest.js';
import {
  cpuSecondsSince,
  fundedAccount,
  processCpuSeconds,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib.js';

const BIN = new URL('../bin/sibyl.js', import.meta.url).pathname;
const PROBE = new URL('memory-probe.js', import.meta.url).pathname;
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PRICE_STREAMS = Number(process.env.PRICE_STREAMS ?? 1000);
const MARKET_STREAMS = Number(process.env.MARKET_STREAMS ?? 1000);
const MARKETS = Number(process.env.MARKETS ?? 100);
const TRADES = Number(process.env.TRADES ?? 200);
const TRADE_RATE = Number(process.env.TRADE_RATE ?? 20);
const PRICE_SECONDS = Number(process.env.PRICE_SECONDS ?? 25);
const THROUGHPUT_SECONDS = Number(process.env.THROUGHPUT_SECONDS ?? 8);
const NEVER_READING = Number(process.env.NEVER_READING ?? 100);
const SYMBOLS = ['SOL', 'BTC', 'ETH', 'USDC', 'USDT', 'BONK', 'JUP', 'RAY', 'ORCA', 'PYTH'];
const PER_ACCOUNT = 50;

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The service's RSS after a GC, sampled now: the probe collects and writes a line when sent SIGUSR2,
 * and only then, so that no forced collection falls in the windows whose CPU and latency are measured.
 */
async function memoryNow(server, file) {
  const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
  const before = lines().length;
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 200 && lines().length === before; i++) await sleep(25);
  const [, rss] = (lines().at(-1) ?? '0 0 0').split(' ').map(Number);
  return rss;
}

/** One SSE client: counts events and hands each data line to `onData`. */
function openStream(port, path, key, onData) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${key}` }, agent: false },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`${path}: ${res.statusCode}`));
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buffer += chunk;
          let end = buffer.indexOf('\n');
          while (end !== -1) {
            const line = buffer.slice(0, end);
            buffer = buffer.slice(end + 1);
            if (line.startsWith('data: ')) onData(line.slice(6), performance.timeOrigin + performance.now());
            end = buffer.indexOf('\n');
          }
        });
        res.on('error', () => {});
        resolve(req);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function openMany(count, open) {
  const opened = [];
  for (let i = 0; i < count; i += 50)
    opened.push(
      ...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => open(i + j)))),
    );
  return opened;
}

async function billedThroughput(port, key, seconds) {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/price/SOL`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await r.arrayBuffer();
        if (r.status === 200) done++;
      }
    }),
  );
  return done / seconds;
}

async function main() {
  const name = `sibyl_bench_streams_${process.pid}`;
  const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const dbUrl = new URL(DB_URL);
  dbUrl.pathname = `/${name}`;
  const db = new PostgresDatabase(dbUrl.toString(), { poolSize: 4 });
  const dir = mkdtempSync(join(os.tmpdir(), 'sibyl-bench-streams-'));
  const memoryFile = join(dir, 'memory.txt');
  const port = 20_000 + (process.pid % 20_000);
  let server;
  const sockets = [];
  try {
    await migrate(db);
    const markets = Array.from({ length: MARKETS }, (_, i) => `bench-m${i}`);
    const created = markets.map((id, i) =>
      JSON.stringify({
        id: `ev-${id}`,
        type: 'market.created',
        at: '2026-03-01T10:00:00Z',
        sandbox: true,
        market: {
          id,
          slug: id,
          title: `Market ${i}`,
          description: 'bench',
          category: 'crypto',
          marketType: 'BINARY',
          outcomes: ['Yes', 'No'],
          closesAt: '2030-01-01T00:00:00Z',
          feeBps: 100,
          lockPeriodSeconds: 0,
          creator: { wallet: 'So11111111111111111111111111111111111111112', username: null },
          resolution: { type: 'AI' },
        },
      }),
    );
    await ingestText(db, created.join('\n'));
    const accounts = [];
    for (let i = 0; i < Math.ceil((PRICE_STREAMS + MARKET_STREAMS + NEVER_READING) / PER_ACCOUNT) + 1; i++)
      accounts.push(await fundedAccount(db, { label: `s${i}`, funds: 1_000_000_000n }));
    const keyFor = (n) => accounts[Math.floor(n / PER_ACCOUNT)].key;
    server = startProcess('serve', ['--expose-gc', '--import', PROBE, BIN, 'serve'], {
      LOG_LEVEL: 'warn',
      DATABASE_URL: dbUrl.toString(),
      PORT: String(port),
      HOST: '127.0.0.1',
      STREAMS_PER_KEY: '100',
      STREAMS_PER_ACCOUNT: '1000',
      STREAMS_PER_ADDRESS: '100000',
      STREAMS_PER_PROCESS: '100000',
      RATE_LIMIT_PER_SECOND: '1000000000',
      RATE_LIMIT_BURST: '1000000000',
      RATE_LIMIT_MAX_PER_SECOND: '1000000000',
      RATE_LIMIT_MAX_BURST: '1000000000',
      BENCH_MEMORY_FILE: memoryFile,
      BENCH_MEMORY_INTERVAL_MS: '0',
    });
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, server);
    const thrKey = accounts[accounts.length - 1].key;
    await billedThroughput(port, thrKey, 2); // warm-up
    const alone = await billedThroughput(port, thrKey, THROUGHPUT_SECONDS);
    await sleep(1200);
    const rssBefore = await memoryNow(server, memoryFile);

    // Prices.
    const priceLatency = [];
    let priceEvents = 0;
    let measuring = false;
    const requests = [];
    requests.push(
      ...(await openMany(PRICE_STREAMS, (n) =>
        openStream(
          port,
          `/api/v1/stream/prices?symbols=${SYMBOLS.join(',')}`.replace(
            SYMBOLS.join(','),
            SYMBOLS.slice(n % 5, (n % 5) + 5).join(','),
          ),
          keyFor(n),
          (data, at) => {
            if (!measuring || !data.includes('"resolutionTimestamp"')) return;
            priceEvents++;
            const ts = /"resolutionTimestamp":"([^"]+)"/.exec(data)?.[1];
            if (ts) priceLatency.push(at - Date.parse(ts));
          },
        ),
      )),
    );
    // Markets.
    const pending = new Map();
    const marketLatency = [];
    let marketEvents = 0;
    requests.push(
      ...(await openMany(MARKET_STREAMS, (n) => {
        const k = PRICE_STREAMS + n;
        const ids = [markets[n % MARKETS], markets[(n + 37) % MARKETS]].join(',');
        return openStream(port, `/api/v1/stream/markets?ids=${ids}`, keyFor(k), (data, at) => {
          if (!measuring) return;
          marketEvents++;
          const trade = /"tradeId":"([^"]+)"/.exec(data)?.[1];
          const committed = trade && pending.get(trade);
          if (committed) marketLatency.push(at - committed);
        });
      })),
    );
    await sleep(3000);
    const rssOpen = await memoryNow(server, memoryFile);
    const open = PRICE_STREAMS + MARKET_STREAMS;
    // The billed price beside the open streams.
    const beside = await billedThroughput(port, thrKey, THROUGHPUT_SECONDS);

    measuring = true;
    const cpuBefore = processCpuSeconds(server.pid);
    const started = performance.now();
    for (let i = 0; i < TRADES; i++) {
      const marketId = markets[i % MARKETS];
      const tradeId = `bt-${i}`;
      const line = JSON.stringify({
        id: `ev-${tradeId}`,
        type: 'trade',
        at: new Date(Date.UTC(2026, 2, 2, 0, 0, i)).toISOString(),
        marketId,
        tradeId,
        outcome: i % 2,
        price: 3000 + (i % 4000),
        shares: '1000',
        buyer: 'So11111111111111111111111111111111111111112',
        seller: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      });
      pending.set(tradeId, performance.timeOrigin + performance.now());
      const report = await ingestText(db, line);
      if (report.applied !== 1) throw new Error(JSON.stringify(report));
      await sleep(Math.max(0, (i + 1) * (1000 / TRADE_RATE) - (performance.now() - started)));
    }
    const left = PRICE_SECONDS * 1000 - (performance.now() - started);
    if (left > 0) await sleep(left);
    await sleep(1000);
    measuring = false;
    const cpu = cpuSecondsSince(server.pid, cpuBefore);
    for (const req of requests) req.destroy();
    await sleep(2000);

    // Never-reading clients: a market stream each, on a market that trades; they never read.
    const quiet = await memoryNow(server, memoryFile);
    for (let i = 0; i < NEVER_READING; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.pause();
      socket.write(
        `GET /api/v1/stream/markets?ids=${markets[0]} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keyFor(PRICE_STREAMS + MARKET_STREAMS + i)}\r\n\r\n`,
      );
      sockets.push(socket);
    }
    const rssNever = [];
    for (let i = 0; i < 10; i++) {
      const burst = Array.from({ length: 50 }, (_, j) => {
        const tradeId = `nr-${i}-${j}`;
        return JSON.stringify({
          id: `ev-${tradeId}`,
          type: 'trade',
          at: new Date(Date.UTC(2026, 2, 3, 0, i, j)).toISOString(),
          marketId: markets[0],
          tradeId,
          outcome: 0,
          price: 5000,
          shares: '1',
          buyer: 'So11111111111111111111111111111111111111112',
          seller: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        });
      });
      for (const line of burst) await ingestText(db, line);
      await sleep(1000);
      rssNever.push(await memoryNow(server, memoryFile));
    }

    const pl = priceLatency.sort((a, b) => a - b);
    const ml = marketLatency.sort((a, b) => a - b);
    const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
    const rows = [
      ['price streams (sandbox feed, 5 of 10 symbols each)', String(PRICE_STREAMS)],
      ['market streams (2 of the markets each)', `${MARKET_STREAMS} over ${MARKETS} markets`],
      [
        'price: computation → receipt, p50 / p99',
        `${percentile(pl, 50)?.toFixed(1)} / ${percentile(pl, 99)?.toFixed(1)} ms (${pl.length} events)`,
      ],
      [
        'market: trade ingestion start → receipt, p50 / p99',
        `${percentile(ml, 50)?.toFixed(1)} / ${percentile(ml, 99)?.toFixed(1)} ms (${ml.length} trade events, ${TRADES} trades at ${TRADE_RATE}/s)`,
      ],
      [
        'memory per open stream (RSS after GC)',
        `${((rssOpen - rssBefore) / open / 1024).toFixed(1)} KiB (${mb(rssBefore)} → ${mb(rssOpen)} with ${open} open)`,
      ],
      [
        'service CPU per delivered event',
        cpu === null
          ? `— (no /proc; ${priceEvents + marketEvents} events)`
          : `${((cpu * 1e6) / (priceEvents + marketEvents)).toFixed(1)} µs (${priceEvents + marketEvents} events, ${cpu.toFixed(2)} s CPU)`,
      ],
      [
        'GET /price/SOL, 16 at a time: alone / beside the streams',
        `${alone.toFixed(0)} / ${beside.toFixed(0)} per s (ratio ${(beside / alone).toFixed(2)})`,
      ],
      [
        `${NEVER_READING} never-reading market streams, 500 trades over 10 s: RSS`,
        `${mb(quiet)} before, ${rssNever.map(mb).join(', ')}`,
      ],
    ];
    process.stdout.write(
      `| Measure | Value |\n|---|---|\n${rows.map((r) => `| ${r[0]} | ${r[1]} |`).join('\n')}\n`,
    );
  } finally {
    for (const socket of sockets) socket.destroy();
    if (server) await stopProcess(server);
    await db.close();
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.close();
  }
}

await main();
