// `node bench/evaluation.js`: `sibyl ai evaluate` (the real command, from dist/) against four fake
// providers on loopback answering in their own wire formats after 200 ms (bench/fake-providers.js,
// a process of its own). Measures, for docs/performance.md#ai-evaluation:
//  - a 1,000-question set at --concurrency 16: wall time against the ideal 1,000 × 0.2 s ÷ 16, and
//    CPU per question of the command (bench/cpu-probe.js) and of the fake providers (their /cpu);
//  - the same run again, every answer from the cache;
//  - a 10,000-question set: RSS and live heap (after a collection) sampled every second, first
//    quarter of the run against the last.
// BENCH_EVAL_SMALL / BENCH_EVAL_LARGE change the set sizes (0 skips the large run).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

// BENCH_EVAL_BIN: another build's bin/sibyl.js, to measure it side by side.
const BIN = process.env.BENCH_EVAL_BIN ?? new URL('../bin/sibyl.js', import.meta.url).pathname;
const PROBE = new URL('memory-probe.js', import.meta.url).pathname;
const CPU_PROBE = new URL('cpu-probe.js', import.meta.url).pathname;
const DELAY_MS = 200;
const CONCURRENCY = 16;
const SMALL = Number(process.env.BENCH_EVAL_SMALL ?? 1000);
const LARGE = Number(process.env.BENCH_EVAL_LARGE ?? 10_000);
const CATEGORIES = ['crypto-prices', 'sports', 'politics', 'weather', 'on-chain'];

function writeSet(path, n) {
  const lines = [];
  for (let i = 1; i <= n; i++) {
    lines.push(
      JSON.stringify({
        id: `b${i}`,
        question: `Did benchmark event number ${i} happen before 1 January 2027?`,
        outcomes: ['Yes', 'No'],
        context: `Benchmark question ${i} of ${n}. The event is recorded in the benchmark's own log, which every model is told to trust; nothing else is needed to answer.`,
        answer: i % 5 === 0 ? 'No' : 'Yes',
        category: CATEGORIES[i % CATEGORIES.length],
      }),
    );
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

function run(args, env) {
  return new Promise((resolve, reject) => {
    const cpuFile = env.BENCH_CPU_FILE;
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) reject(new Error(`sibyl ai evaluate exited ${code}:\n${output}`));
      else {
        const [user = 0, system = 0] = cpuFile
          ? readFileSync(cpuFile, 'utf8').trim().split(' ').map(Number)
          : [];
        resolve({ seconds, output, cpuSeconds: cpuFile ? (user + system) / 1e6 : null });
      }
    });
  });
}

async function startFakes() {
  const child = spawn(process.execPath, [new URL('fake-providers.js', import.meta.url).pathname], {
    env: { PATH: process.env.PATH, FAKE_DELAY_MS: String(DELAY_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c) => {
      text += c;
      if (text.includes('\n')) resolve(text.split('\n')[0]);
    });
    child.on('exit', () => reject(new Error('fake providers exited')));
  });
  return { child, providers: JSON.parse(line) };
}

/** CPU seconds the fake providers' process has used so far. */
async function fakesCpu(providers) {
  // bench/fake-providers.js answers its process.cpuUsage() as JSON.
  const usage = /** @type {NodeJS.CpuUsage} */ (
    await (await fetch(`${new URL(providers[0].url).origin}/cpu`)).json()
  );
  const { user, system } = usage;
  return (user + system) / 1e6;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

async function main() {
  const dir = mkdtempSync(join(os.tmpdir(), 'sibyl-bench-eval-'));
  const fakes = await startFakes();
  const env = { PATH: process.env.PATH, LOG_LEVEL: 'warn', AI_RETRIES: '0' };
  fakes.providers.forEach(({ kind, url }, i) => {
    Object.assign(env, {
      [`AI_MODEL_${i + 1}_PROVIDER`]: kind,
      [`AI_MODEL_${i + 1}_BASE_URL`]: url,
      [`AI_MODEL_${i + 1}_API_KEY`]: `sk-bench-${i + 1}`,
    });
  });
  const evaluate = (set, cache, out, extraEnv = {}, nodeArgs = []) =>
    run(
      [
        ...nodeArgs,
        BIN,
        'ai',
        'evaluate',
        set,
        '--models',
        'live',
        '--concurrency',
        String(CONCURRENCY),
        '--cache',
        cache,
        '--out',
        out,
      ],
      { ...env, ...extraEnv },
    );
  const lines = [];
  try {
    const small = join(dir, 'small.jsonl');
    writeSet(small, Math.max(1, SMALL));
    const ideal = (SMALL * DELAY_MS) / 1000 / CONCURRENCY;
    if (SMALL > 0) {
      const fakesBefore = await fakesCpu(fakes.providers);
      const first = await evaluate(
        small,
        join(dir, 'small-cache.jsonl'),
        join(dir, 'small.json'),
        { BENCH_CPU_FILE: join(dir, 'small-cpu.txt') },
        ['--import', CPU_PROBE],
      );
      const fakesUsed = (await fakesCpu(fakes.providers)) - fakesBefore;
      const report = JSON.parse(readFileSync(join(dir, 'small.json'), 'utf8'));
      if (report.evaluated !== SMALL || report.answers.asked !== SMALL * 4)
        throw new Error(`the first run evaluated ${report.evaluated}, asked ${report.answers.asked}`);
      const again = await evaluate(
        small,
        join(dir, 'small-cache.jsonl'),
        join(dir, 'small-again.json'),
        { BENCH_CPU_FILE: join(dir, 'again-cpu.txt') },
        ['--import', CPU_PROBE],
      );
      const cached = JSON.parse(readFileSync(join(dir, 'small-again.json'), 'utf8'));
      if (cached.answers.asked !== 0 || cached.answers.cached !== SMALL * 4)
        throw new Error(`the rerun asked ${cached.answers.asked} answers`);
      lines.push(
        `| ${SMALL.toLocaleString('en')} questions, first run | ${first.seconds.toFixed(1)} s | ideal ${ideal.toFixed(1)} s | ${(first.seconds / ideal).toFixed(2)}× |`,
        `| the same again, every answer cached | ${again.seconds.toFixed(1)} s | | |`,
        '',
        `| CPU, ${SMALL.toLocaleString('en')} questions, first run | total | per question |`,
        '|---|---:|---:|',
        `| \`sibyl ai evaluate\` (start-up included) | ${first.cpuSeconds.toFixed(2)} s | ${((first.cpuSeconds / SMALL) * 1000).toFixed(2)} ms |`,
        `| the same again, every answer cached | ${again.cpuSeconds.toFixed(2)} s | |`,
        `| the fake providers (4 answers a question) | ${fakesUsed.toFixed(2)} s | ${((fakesUsed / SMALL) * 1000).toFixed(2)} ms |`,
      );
    }

    if (LARGE > 0) {
      const large = join(dir, 'large.jsonl');
      writeSet(large, LARGE);
      const memoryFile = join(dir, 'memory.txt');
      const big = await evaluate(
        large,
        join(dir, 'large-cache.jsonl'),
        join(dir, 'large.json'),
        { BENCH_MEMORY_FILE: memoryFile, BENCH_MEMORY_INTERVAL_MS: '1000' },
        ['--expose-gc', '--import', PROBE],
      );
      const samples = readFileSync(memoryFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').map(Number));
      const q = Math.max(1, Math.floor(samples.length / 4));
      const firstQ = samples.slice(0, q);
      const lastQ = samples.slice(-q);
      const idealLarge = (LARGE * DELAY_MS) / 1000 / CONCURRENCY;
      lines.push(
        `| ${LARGE.toLocaleString('en')} questions, first run | ${big.seconds.toFixed(1)} s | ideal ${idealLarge.toFixed(1)} s | ${(big.seconds / idealLarge).toFixed(2)}× |`,
        '',
        `| ${LARGE.toLocaleString('en')}-question run, ${samples.length} samples | first quarter (mean) | last quarter (mean) | last ÷ first |`,
        '|---|---:|---:|---:|',
        `| RSS | ${mb(mean(firstQ.map((s) => s[1])))} MB | ${mb(mean(lastQ.map((s) => s[1])))} MB | ${(mean(lastQ.map((s) => s[1])) / mean(firstQ.map((s) => s[1]))).toFixed(2)} |`,
        `| live heap (after a collection) | ${mb(mean(firstQ.map((s) => s[2])))} MB | ${mb(mean(lastQ.map((s) => s[2])))} MB | ${(mean(lastQ.map((s) => s[2])) / mean(firstQ.map((s) => s[2]))).toFixed(2)} |`,
      );
    }
  } finally {
    fakes.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  const text = [
    `| run (--concurrency ${CONCURRENCY}, models answering in ${DELAY_MS} ms) | wall time | ideal | ratio |`,
    '|---|---:|---:|---:|',
    ...lines,
  ].join('\n');
  process.stdout.write(
    `${text}\n\nload: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')} (${os.cpus().length} CPUs)\n`,
  );
}

await main();
