import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { BIN } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { verifies } from './helpers.js';

/**
 * A crash between signing and commit (docs/attestations.md#ai-resolutions): a real `sibyl work` on
 * PostgreSQL signs a COMPLETED resolution inside its finishing transaction, and is killed with
 * SIGKILL while that transaction waits (the outbox table is locked by the test, so the callback row
 * cannot be written). Another worker finishes the request after the lease: its attestation is the
 * same message — and, Ed25519 being deterministic, the same signature — as the one the dead worker
 * signed. One answer, one message.
 */

function startWorker(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [BIN, 'work'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, output: () => output };
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

async function until(what: string, condition: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(usingPostgres)(
  'a worker killed after signing, before commit (PostgreSQL, real processes)',
  () => {
    let database: TestDatabase;
    let ctx: TestContext;
    const workers: ChildProcess[] = [];
    const secret = generateSecret();
    const env = () => ({
      DATABASE_URL: database.location,
      ATTESTATION_SECRET_KEY: secret,
      AI_DEADLINE_MS: '2000',
      AI_LEASE_MS: '3000',
    });

    beforeAll(async () => {
      database = await createTestDatabase();
      await database.db.exec(CALLBACKS_VIEW);
      ctx = await createTestContext({ database, config: { ATTESTATION_SECRET_KEY: secret } });
    });
    afterAll(async () => {
      for (const worker of workers) await stop(worker, 'SIGKILL');
      await ctx?.close();
    });

    it('the retried answer is signed over the identical message', async () => {
      const account = await ctx.createAccount({ balanceUsd: '5.00' });
      // The outbox table locked: the dying worker's finishing transaction waits after signing.
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => {};
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holding = database.db.transaction(async (tx) => {
        await tx.query('LOCK TABLE webhook_deliveries IN EXCLUSIVE MODE');
        locked();
        await released;
      });
      await isLocked;

      const submitted = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/ai/resolve',
        payload: {
          question: 'Does a crash change the message?',
          outcomes: ['Yes', 'No'],
          context: '[sandbox:votes=1,1,1,0]',
          callbackUrl: 'https://hooks.example.com/sibyl',
        },
      });
      expect(submitted.statusCode).toBe(200);
      const { requestId } = submitted.json() as { requestId: string };

      const first = startWorker(env());
      workers.push(first.child);
      const signedLine = () =>
        first
          .output()
          .split('\n')
          .find((line) => line.includes('AI resolution signed') && line.includes(requestId));
      await until('the first worker to sign', async () => signedLine() !== undefined, first.output);
      const signedBefore = JSON.parse(signedLine() ?? '{}') as { message: string };
      await stop(first.child, 'SIGKILL');
      release();
      await holding;
      const status = async () =>
        (
          await database.db.query<{ status: string }>('SELECT status FROM ai_requests WHERE id = $1', [
            requestId,
          ])
        )[0]?.status;
      expect(await status()).toBe('PROCESSING');

      const second = startWorker(env());
      workers.push(second.child);
      await until('the request to complete', async () => (await status()) === 'COMPLETED', second.output);
      await stop(second.child, 'SIGTERM');

      const [row] = await database.db.query<{
        attempts: number;
        result: { attestation: { message: string; signature: string; publicKey: string } };
      }>('SELECT attempts, result FROM ai_requests WHERE id = $1', [requestId]);
      expect(row?.attempts).toBe(2);
      const attestation = row?.result.attestation;
      expect(attestation?.message).toBe(signedBefore.message);
      const sandbox = keyPairFromSecret(secret, 'test').sandbox.publicKeyBase58;
      expect(attestation && verifies(attestation, sandbox)).toBe(true);
      // The callback carries the same bytes; the secret appears in no worker's log.
      const [callback] = await database.db.query<{ data: { attestation: unknown } }>(
        'SELECT data FROM test_recorded_callbacks WHERE request_id = $1',
        [requestId],
      );
      expect(callback?.data.attestation).toEqual(attestation);
      expect(first.output() + second.output()).not.toContain(secret);
      await expectLedgerReconciles(database.db);
    });
  },
);
