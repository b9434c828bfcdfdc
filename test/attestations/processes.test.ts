import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import { databaseEnv, runCli } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { balanceOf } from '../helpers/ledger.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { verifies } from './helpers.js';

/**
 * The rotation recipe of docs/attestations.md#rotation, end to end, with real processes on
 * PostgreSQL: two `sibyl serve` and one `sibyl work` started with ATTESTATION_SECRET_KEY=K1;
 * `sibyl attestation rotate` with K2. Within the sync period each stops signing — 503
 * ATTESTATION_UNAVAILABLE, not charged; a scheduled price check not run, its attempt given back —
 * and says so at error level; the keys answer is the list's; restarted with K2 they sign again and
 * the waiting job is signed by K2.
 */

const K1 = generateSecret();
const K2 = generateSecret();
const k1 = keyPairFromSecret(K1, 'K1');
const k2 = keyPairFromSecret(K2, 'K2');

let database: TestDatabase;
let ctx: TestContext;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  database = await createTestDatabase();
  ctx = await createTestContext({ database });
});
afterAll(async () => {
  for (const service of running) await service.kill();
  if (!usingPostgres) return;
  await ctx.close();
  await database.close();
});

async function until(what: string, condition: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pino lines at error level that say the process stopped signing. */
function saysRetired(service: ServiceProcess): boolean {
  return service
    .output()
    .split('\n')
    .some((line) => line.includes('"level":50') && line.includes('attestation key retired'));
}

describe.runIf(usingPostgres)('an attestation key rotation across real processes (PostgreSQL)', () => {
  it('the processes holding the retired key stop signing and say so; restarted with the new key they sign', async () => {
    const env = (key: string) => ({
      ...databaseEnv(database.location),
      ATTESTATION_SECRET_KEY: key,
      ATTESTATION_KEYS_SYNC_MS: '200',
      JOB_PRICE_LEASE_MS: '1000',
      DB_POOL_SIZE: '4',
    });
    const serve = async (key: string) => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const service = await startService('serve', { ...env(key), PORT: String(port) }, httpReady(base));
      running.push(service);
      return { service, base };
    };
    // A worker is up once its metrics listener answers: the last step of its start.
    const work = async (key: string) => {
      const port = await freePort();
      const ready = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.ok);
      const service = await startService('work', { ...env(key), METRICS_PORT: String(port) }, ready);
      running.push(service);
      return service;
    };
    const [a, b] = [await serve(K1), await serve(K1)];
    const worker = await work(K1);
    const output = () => [a.service, b.service, worker].map((s) => s.output()).join('\n');

    const account = await ctx.createAccount({ balanceUsd: '5.00' });
    const headers = { authorization: `Bearer ${account.key}` };
    const attested = (base: string) => fetch(`${base}/api/v1/price/SOL?attest=true`, { headers });
    for (const { base } of [a, b]) {
      const res = await attested(base);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { attestation: { publicKey: string } }).attestation.publicKey).toBe(
        k1.sandbox.publicKeyBase58,
      );
    }

    // The documented recipe: set the new key, then `sibyl attestation rotate` with it.
    const rotated = runCli(['attestation', 'rotate'], { ...env(K2) });
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain(k2.live.publicKeyBase58);

    for (const service of [a.service, b.service, worker])
      await until('each process to say it stopped signing', async () => saysRetired(service), output);
    const balance = await balanceOf(database.db, account.accountId);
    for (const { base } of [a, b]) {
      const res = await attested(base);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('300');
      expect(await res.json()).toMatchObject({ code: 'ATTESTATION_UNAVAILABLE' });
      // One view: the list's current keys, and this instance does not sign.
      const keys = (await (await fetch(`${base}/api/v1/attestation/keys`)).json()) as Record<string, unknown>;
      expect(keys).toMatchObject({
        enabled: false,
        live: k2.live.publicKeyBase58,
        sandbox: k2.sandbox.publicKeyBase58,
      });
    }
    expect(await balanceOf(database.db, account.accountId)).toBe(balance); // not charged

    // A scheduled price check due now: the worker does not run it, and its attempt is given back.
    const scheduled = await fetch(`${a.base}/api/v1/price/scheduled`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ symbol: 'SOL', scheduledFor: new Date(Date.now() + 3000).toISOString() }),
    });
    expect(scheduled.status, await scheduled.clone().text()).toBe(200);
    const jobId = ((await scheduled.json()) as { jobId: string }).jobId;
    await until('the worker to give the job back', async () => worker.output().includes(jobId), output);
    const job = async () =>
      (
        await database.db.query<{
          status: string;
          attempts: number;
          result: { attestation?: { publicKey: string } } | null;
        }>('SELECT status, attempts, result FROM scheduled_jobs WHERE id = $1', [jobId])
      )[0];
    expect(await job()).toMatchObject({ status: 'PROCESSING', result: null });

    // Restarted with the new key: they sign with it, and the job is signed by it.
    for (const service of running.splice(0)) await service.kill();
    const fresh = await serve(K2);
    const newWorker = await work(K2);
    const res = await attested(fresh.base);
    expect(res.status).toBe(200);
    const { attestation } = (await res.json()) as {
      attestation: { message: string; signature: string; publicKey: string };
    };
    expect(attestation.publicKey).toBe(k2.sandbox.publicKeyBase58);
    expect(verifies(attestation, k2.sandbox.publicKeyBase58)).toBe(true);
    await until('the job to complete', async () => (await job())?.status === 'COMPLETED', newWorker.output);
    expect(await job()).toMatchObject({ attempts: 1 }); // the runs given back were not counted
    expect((await job())?.result?.attestation?.publicKey).toBe(k2.sandbox.publicKeyBase58);
    const keys = (await (await fetch(`${fresh.base}/api/v1/attestation/keys`)).json()) as Record<
      string,
      unknown
    >;
    expect(keys).toMatchObject({ enabled: true, live: k2.live.publicKeyBase58 });
    expect(output()).not.toContain(K1);
  }, 300_000);
});
