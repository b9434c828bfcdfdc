// Runs `sibyl serve` and `sibyl work` through a connection pooler and reports what breaks: the
// answers to a burst of paid requests, how late scheduled jobs finish (their wake-up is a
// LISTEN/NOTIFY), whether AI resolutions finish, and the errors the processes log.
//
//   node scripts/pgbouncer-check.js POOLED_URL DIRECT_URL
//
// DIRECT_URL reaches the same database without the pooler: it migrates and creates the sandbox
// account used. docs/operations.md#pgbouncer has the results for each pool mode.
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [pooled, direct] = process.argv.slice(2);
if (!pooled || !direct) {
  process.stderr.write('usage: node scripts/pgbouncer-check.js POOLED_DATABASE_URL DIRECT_DATABASE_URL\n');
  process.exit(2);
}
const bin = fileURLToPath(new URL('../bin/sibyl.js', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const cli = (...args) =>
  JSON.parse(
    execFileSync(process.execPath, [bin, ...args, '--json'], {
      env: { ...process.env, DATABASE_URL: direct },
      encoding: 'utf8',
    }),
  );

cli('migrate');
const account = cli('accounts', 'create', '--mode', 'sandbox');
cli('accounts', 'credit', account.id, '100', '--reference', `pgbouncer-check-${Date.now()}`);
const { key } = cli('keys', 'create', account.id, '--rate-limit', '500', '--burst', '1000');

const port = 38_000 + Math.floor(Math.random() * 1000);
const env = {
  ...process.env,
  DATABASE_URL: pooled,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
};
const logs = { serve: '', work: '' };
const processes = ['serve', 'work'].map((role) => {
  const child = spawn(process.execPath, [bin, role], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk) => {
    logs[role] += chunk;
  });
  child.stderr.on('data', (chunk) => {
    logs[role] += chunk;
  });
  return child;
});

const base = `http://127.0.0.1:${port}/api/v1`;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const call = (path, body) =>
  fetch(`${base}${path}`, body ? { method: 'POST', headers, body: JSON.stringify(body) } : { headers });

try {
  for (let i = 0; i < 120; i += 1) {
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await sleep(500);
  }
  await sleep(2000); // the worker's queues LISTEN

  const statuses = {};
  const burst = async (n, make) => {
    let started = 0;
    const lanes = Array.from({ length: 20 }, async () => {
      while (started < n) {
        started += 1;
        const status = await make().then(
          (r) => r.status,
          (e) => `network: ${e.message}`,
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    });
    await Promise.all(lanes);
  };
  await burst(300, () => call('/price/SOL'));
  await burst(100, () => call('/price/batch', { symbols: ['SOL', 'JUP'] }));
  await burst(50, () => call('/account/transactions?limit=5'));

  const poll = async (path, final) => {
    for (let i = 0; i < 160; i += 1) {
      await sleep(250);
      const record = /** @type {any} */ (await (await call(path)).json());
      if (final.includes(record.status)) return record;
    }
    return null;
  };
  const jobs = [];
  for (let i = 0; i < 3; i += 1) {
    const due = Date.now() + 3000;
    const { jobId } = /** @type {any} */ (
      await (
        await call('/price/scheduled', { symbol: 'SOL', scheduledFor: new Date(due).toISOString() })
      ).json()
    );
    const done = await poll(`/price/scheduled/${jobId}`, ['COMPLETED', 'FAILED']);
    jobs.push(
      done
        ? `${done.status} ${Date.parse(done.finishedAt) - due} ms after due`
        : 'not finished 40 s after due',
    );
  }
  const resolutions = [];
  for (let i = 0; i < 2; i += 1) {
    const submitted = Date.now();
    const question = {
      question: `Check ${submitted}?`,
      outcomes: ['Yes', 'No'],
      callbackUrl: 'https://hooks.example.com/x',
    };
    const { requestId } = /** @type {any} */ (await (await call('/ai/resolve', question)).json());
    const done = await poll(`/ai/request/${requestId}`, ['COMPLETED', 'FAILED']);
    resolutions.push(
      done ? `${done.status} ${Date.now() - submitted} ms after submit` : 'not finished 40 s after submit',
    );
  }

  const errors = (text) => [
    ...new Set(
      text
        .split('\n')
        .filter((line) => /"level":(50|60)/.test(line))
        .map((line) => {
          const entry = JSON.parse(line);
          return `${entry.msg}: ${entry.err?.message ?? ''}`;
        }),
    ),
  ];
  const report = {
    statuses,
    jobs,
    resolutions,
    serveErrors: errors(logs.serve),
    workErrors: errors(logs.work),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  for (const child of processes) child.kill('SIGTERM');
  await Promise.all(processes.map((child) => new Promise((resolve) => child.once('exit', resolve))));
}
