// Loaded into the process under test by bench/evaluation.js and bench/streams.js (node --expose-gc
// --import): it collects garbage and appends `elapsedMs rss heapUsed` (bytes) to BENCH_MEMORY_FILE,
// so that what is measured is what the process keeps, not what it has yet to free — every
// BENCH_MEMORY_INTERVAL_MS, or, with BENCH_MEMORY_INTERVAL_MS=0, only when sent SIGUSR2 (so that
// the forced collections do not fall in a window whose CPU or latency is being measured).
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
  if (interval > 0) setInterval(sample, interval).unref();
  else process.on('SIGUSR2', sample);
}
