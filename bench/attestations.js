// Attestations' cost (docs/performance.md#attestations): a billed sandbox single price with and
// without `attest=true`, interleaved request by request on one in-process app (app.inject, so the
// socket is not measured), reported as throughput ratio and CPU µs per request; and the CPU cost of
// one Ed25519 signature of a 94-byte price message.
//
//   npm run build && node bench/attestations.js [requests per side, default 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../dist/app.js';
import { signMessage } from '../dist/attestations/attestor.js';
import { generateSecret, keyPairFromSecret } from '../dist/attestations/keys.js';
import { encodePrice } from '../dist/attestations/layout.js';
import { loadConfig } from '../dist/config.js';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { createSandboxStarter } from '../dist/first-start.js';
import { systemClock } from '../dist/lib/clock.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';

const n = Number(process.argv[2] ?? 2000);

/** A sandbox account on a fresh embedded database, its rate limit out of the way. */
async function withBenchApp(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-bench-'));
  const { db } = await PgliteDatabase.open(join(dir, 'data'));
  try {
    await migrate(db);
    const starter = await createSandboxStarter(db, systemClock, clearSecretBox);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      RATE_LIMIT_BURST: '1000000',
      RATE_LIMIT_MAX_BURST: '1000000',
    });
    const app = await buildApp({ config, db, clock: systemClock, secrets: clearSecretBox });
    await app.ready();
    try {
      await fn(app, starter.key.key);
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await withBenchApp(async (app, key) => {
  const call = (url) =>
    app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}` } });
  for (let i = 0; i < 200; i++) {
    await call('/price/SOL');
    await call('/price/SOL?attest=true');
  }
  const side = { plain: { cpu: 0, wall: 0 }, attest: { cpu: 0, wall: 0 } };
  for (let i = 0; i < n; i++) {
    for (const [name, url] of [
      ['plain', '/price/SOL'],
      ['attest', '/price/SOL?attest=true'],
    ]) {
      const cpu = process.cpuUsage();
      const wall = process.hrtime.bigint();
      const response = await call(url);
      if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
      side[name].wall += Number(process.hrtime.bigint() - wall) / 1e3;
      const used = process.cpuUsage(cpu);
      side[name].cpu += used.user + used.system;
    }
  }
  const keys = keyPairFromSecret(generateSecret(), 'bench');
  const message = encodePrice({
    mode: 'live',
    requestId: 'req_bench',
    timeMs: Date.now(),
    symbolOrMint: 'SOL',
    price: 150.41029587,
    sources: 3,
    valid: true,
  });
  const signatures = 20_000;
  const before = process.cpuUsage();
  for (let i = 0; i < signatures; i++) signMessage(keys, 'live', message);
  const signCpu = process.cpuUsage(before);
  const report = {
    requestsPerSide: n,
    plainCpuUsPerRequest: +(side.plain.cpu / n).toFixed(1),
    attestCpuUsPerRequest: +(side.attest.cpu / n).toFixed(1),
    throughputRatio: +(side.plain.wall / side.attest.wall).toFixed(3),
    cpuUsPerSignature: +((signCpu.user + signCpu.system) / signatures).toFixed(1),
    loadAverage: loadavg().map((l) => +l.toFixed(2)),
  };
  console.log(JSON.stringify(report, null, 2));
});
