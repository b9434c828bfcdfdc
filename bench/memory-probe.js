// Loaded into the process under test by bench/evaluation.js (node --expose-gc --import): every
// BENCH_MEMORY_INTERVAL_MS it collects garbage and appends `elapsedMs rss heapUsed` (bytes) to
// BENCH_MEMORY_FILE, so that what is measured is what the process keeps, not what it has yet to free.
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
const interval = Number(process.env.BENCH_MEMORY_INTERVAL_MS ?? 1000);
if (file) {
  const started = performance.now();
  const sample = () => {
    globalThis.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    appendFileSync(file, `${Math.round(performance.now() - started)} ${rss} ${heapUsed}\n`);
  };
  setInterval(sample, interval).unref();
}
