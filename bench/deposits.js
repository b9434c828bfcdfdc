// `npm run bench:deposits`: the deposit watcher catching up 10,000 historical deposits (half SOL,
// half USDC, real transactions executed in LiteSVM and served by the fake JSON-RPC of
// test/helpers/solana) into PostgreSQL — deposits credited per second and CPU per deposit — then
// keeping up with one deposit a second: the lag from the transaction's finalization (as the fake
// RPC reports it) to the credit visible in the account's balance, p50/p99. The measurement lives in
// test/deposits/watcher-catchup.test.ts (the transactions are built with the TypeScript test
// helpers); this script runs it at full size and prints its figures. Figures go to
// docs/performance.md. Environment: BENCH_DATABASE_URL (default the local test PostgreSQL; `pglite`
// for the embedded database), DEPOSIT_BENCH_N (10000), DEPOSIT_BENCH_LAG_SAMPLES (60),
// DEPOSIT_BENCH_POLL_MS (1000).
import { spawnSync } from 'node:child_process';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** @type {NodeJS.ProcessEnv} */
const env = {
  ...process.env,
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  DEPOSIT_BENCH_N: process.env.DEPOSIT_BENCH_N ?? '10000',
  DEPOSIT_BENCH_LAG_SAMPLES: process.env.DEPOSIT_BENCH_LAG_SAMPLES ?? '60',
  DEPOSIT_BENCH_POLL_MS: process.env.DEPOSIT_BENCH_POLL_MS ?? '1000',
};
if (url === 'pglite') delete env.TEST_DATABASE_URL;
else env.TEST_DATABASE_URL = url;

const run = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', 'test/deposits/watcher-catchup.test.ts', '--testTimeout=1200000'],
  { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
);
for (const line of run.stdout.split('\n')) {
  if (/^(built \d+|catch-up:|lag at)/.test(line)) console.log(line);
}
if (run.status !== 0) {
  console.error(run.stdout);
  process.exit(run.status ?? 1);
}
