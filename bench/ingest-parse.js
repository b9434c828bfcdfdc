// The service's parse of ingestion lines (src/markets/ingest/events.ts parseEventLine: JSON, schema,
// wallets, amounts, `at`, the body's hash), the Node.js part of trade ingestion that every event
// pays (docs/performance.md#the-parse-of-an-ingestion-line). LINES trade events as
// bench/ingest-compare.js generates them (200 markets, 2,000 wallets, a tenth late), parsed ROUNDS
// times in one process; with BENCH_OTHER=<a built checkout>, that checkout's parseEventLine on the
// same lines in the same process, the two taken in turn (which goes first alternates), so a drifting
// machine treats both alike. Reports the median CPU time per line of each, and their ratio.
//
//   npm run build && BENCH_OTHER=<a built checkout> node bench/ingest-parse.js
import { parseEventLine } from '../dist/markets/ingest/events.js';
import { median, randomMint } from './lib.js';
import { generator } from './markets.js';

const LINES = Number(process.env.LINES ?? 40_000);
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const HOUR = 3_600_000;

const random = generator(36);
const wallets = Array.from({ length: 2_000 }, randomMint);
let clock = Date.parse('2026-11-01T02:00:00Z');
const lines = Array.from({ length: LINES }, (_, i) => {
  clock += 1 + Math.floor(random() * 20);
  const late = random() < 0.1;
  return JSON.stringify({
    id: `ingest-t${i}`,
    type: 'trade',
    at: new Date(late ? clock - Math.floor(random() * 6 * HOUR) : clock).toISOString(),
    marketId: `ingest-${String(Math.floor(random() ** 2 * 200)).padStart(4, '0')}`,
    tradeId: `ingest-t${i}`,
    outcome: i % 2,
    price: 100 + Math.floor(random() * 9_800),
    shares: String(1 + Math.floor(random() * 1e10)),
    buyer: wallets[Math.floor(random() * wallets.length)],
    seller: wallets[Math.floor(random() * wallets.length)],
  });
});

/** @type {{ name: string, parse: typeof parseEventLine, us: number[] }[]} */
const parsers = [{ name: 'this checkout', parse: parseEventLine, us: [] }];
if (process.env.BENCH_OTHER) {
  const other = await import(`${process.env.BENCH_OTHER}/dist/markets/ingest/events.js`);
  parsers.push({ name: process.env.BENCH_OTHER, parse: other.parseEventLine, us: [] });
}

/**
 * The same verdicts from every parser (the body's hash compared in hex, a Buffer in older builds):
 * what is compared is the same work.
 * @param {ReturnType<typeof parseEventLine>} result
 */
const verdict = (result) => {
  if (!result.ok) return JSON.stringify(result);
  const sha = /** @type {string | Buffer} */ (result.parsed.sha256);
  return JSON.stringify({ ...result.parsed, sha256: typeof sha === 'string' ? sha : sha.toString('hex') });
};
const reference = lines.map((line, i) => verdict(parsers[0].parse(line, i + 1)));
for (const p of parsers.slice(1))
  lines.forEach((line, i) => {
    if (verdict(p.parse(line, i + 1)) !== reference[i]) throw new Error(`${p.name} differs at line ${i + 1}`);
  });

for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? parsers : [...parsers].reverse();
  for (const p of order) {
    const start = process.cpuUsage();
    let ok = 0;
    for (let i = 0; i < lines.length; i++) if (p.parse(lines[i], i + 1).ok) ok++;
    const used = process.cpuUsage(start);
    if (ok !== lines.length) throw new Error(`${p.name}: ${lines.length - ok} lines refused`);
    p.us.push((used.user + used.system) / lines.length);
  }
}
console.log(
  `${LINES} trade lines, ${ROUNDS} rounds each (the first a warm-up of both), median CPU µs per line:`,
);
for (const p of parsers) console.log(`- ${p.name}: ${median(p.us.slice(1)).toFixed(2)}`);
if (parsers.length > 1)
  console.log(
    `ratio this checkout ÷ other: ${(median(parsers[0].us.slice(1)) / median(parsers[1].us.slice(1))).toFixed(2)}`,
  );
