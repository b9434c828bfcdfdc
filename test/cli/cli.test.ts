import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkKeyFormat } from '../../src/keys/format.js';
import { databaseEnv, runCliOn, runCli as runProcess } from '../helpers/cli.js';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';

let database: TestDatabase;
let env: Record<string, string>;

/** A command run in this process on the test's open database (see runCliOn). */
const runCli = (args: string[], commandEnv: Record<string, string>) =>
  runCliOn(database.db, args, commandEnv);

async function json(args: string[]) {
  const result = await runCli([...args, '--json'], env);
  const lines = result.stdout.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1); // exactly one JSON object on stdout
  return { status: result.status, body: JSON.parse(lines[0] as string) };
}

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 2 });
  env = databaseEnv(database.location);
});

afterAll(async () => {
  await expectLedgerReconciles(database.db);
  await database.close();
});

// The real `sibyl` process: its start, its own database opening, its output and exit codes.
describe('sibyl as a process', { timeout: 120_000 }, () => {
  it('migrate opens the database and reports it up to date; a bare sibyl prints usage and exits 2', () => {
    // A database of its own: the embedded one admits one process at a time, and this file holds its own.
    const location = usingPostgres ? database.location : copyPgliteTemplate();
    const migrated = runProcess(['migrate', '--json'], databaseEnv(location));
    expect(migrated.stdout.trim(), migrated.stderr).toBe('{"applied":[]}');
    expect(migrated.status).toBe(0);
    const bare = runProcess([], databaseEnv(location));
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('Usage: sibyl <command>');
    if (!usingPostgres) rmSync(dirname(location), { recursive: true, force: true });
  });

  it('refuses a bad environment with a readable message and exit 1', () => {
    const result = runProcess(['migrate'], { ...env, PORT: 'eighty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT');
  });
});

describe('sibyl CLI', { timeout: 240_000 }, () => {
  it('migrate reports an up-to-date database', async () => {
    expect(await json(['migrate'])).toEqual({ status: 0, body: { applied: [] } });
  });

  it('creates an account, credits it idempotently, and issues a working key', async () => {
    const wallet = 'So11111111111111111111111111111111111111112';
    const created = await json(['accounts', 'create', '--mode', 'sandbox', '--wallet', wallet]);
    expect(created.status).toBe(0);
    expect(created.body).toMatchObject({
      accountId: expect.stringMatching(/^acct_/),
      mode: 'sandbox',
      status: 'active',
      walletAddress: wallet,
      balanceUsd: '0.00',
    });
    const accountId = created.body.accountId as string;

    const credit = await json(['accounts', 'credit', accountId, '25.50', '--reference', 'tx-sig-1']);
    expect(credit.body).toMatchObject({ amountUsd: '25.50', balanceUsd: '25.50', duplicate: false });
    const again = await json(['accounts', 'credit', accountId, '25.50', '--reference', 'tx-sig-1']);
    expect(again.body).toMatchObject({ balanceUsd: '25.50', duplicate: true });

    const key = await json(['keys', 'create', accountId, '--name', 'ops', '--permissions', 'price,account']);
    expect(key.status).toBe(0);
    expect(key.body).toMatchObject({ id: expect.stringMatching(/^key_/), permissions: ['price', 'account'] });
    expect(checkKeyFormat(key.body.key)).toBe('sandbox');

    const shown = await json(['accounts', 'show', accountId]);
    expect(shown.body.balanceUsd).toBe('25.50');
    expect((await json(['ledger', 'reconcile'])).body).toMatchObject({ ok: true });
  });

  it('sets a key rate limit up to the operator ceiling, at creation and with keys update', async () => {
    const accountId = (await json(['accounts', 'create', '--mode', 'sandbox'])).body.accountId as string;
    const created = await json(['keys', 'create', accountId, '--rate-limit', '400', '--burst', '900']);
    expect(created.status).toBe(0);
    expect(created.body.rateLimit).toEqual({ requestsPerSecond: 400, burst: 900, isDefault: false });
    const keyId = created.body.id as string;

    const updated = await json([
      'keys',
      'update',
      keyId,
      '--rate-limit',
      '500',
      '--burst',
      '1000',
      '--name',
      'fast',
    ]);
    expect(updated.status).toBe(0);
    expect(updated.body).toMatchObject({
      id: keyId,
      name: 'fast',
      rateLimit: { requestsPerSecond: 500, burst: 1000, isDefault: false },
    });
    const tooFast = await json(['keys', 'update', keyId, '--rate-limit', '501', '--burst', '1000']);
    expect(tooFast.status).toBe(1);
    expect(tooFast.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body.rateLimit.requestsPerSecond', message: 'must be at most 500' }] },
    });
    // The ceiling is the operator's configuration.
    const raised = await runCli(
      ['keys', 'update', keyId, '--rate-limit', '2000', '--burst', '5000', '--json'],
      {
        ...env,
        RATE_LIMIT_MAX_PER_SECOND: '2000',
        RATE_LIMIT_MAX_BURST: '5000',
      },
    );
    expect(JSON.parse(raised.stdout).rateLimit).toMatchObject({ requestsPerSecond: 2000, burst: 5000 });
    const reset = await json(['keys', 'update', keyId, '--rate-limit', 'default']);
    expect(reset.body.rateLimit).toEqual({ requestsPerSecond: 50, burst: 100, isDefault: true });

    expect((await json(['keys', 'create', accountId, '--rate-limit', '10'])).body.code).toBe('USAGE');
    expect(
      (await json(['keys', 'create', accountId, '--rate-limit', 'fast', '--burst', '1'])).body.code,
    ).toBe('USAGE');
    expect((await json(['keys', 'update', keyId])).body.code).toBe('USAGE');
    expect((await json(['keys', 'update', 'key_missing', '--name', 'x'])).body).toEqual({
      error: 'Key key_missing not found',
      code: 'NOT_FOUND',
    });
  });

  it('reports errors as one JSON object and a non-zero exit', async () => {
    const missing = await json(['keys', 'create', 'acct_missing']);
    expect(missing).toEqual({
      status: 1,
      body: { error: 'Account acct_missing does not exist', code: 'ACCOUNT_NOT_FOUND' },
    });
    const badAmount = await json(['accounts', 'credit', 'acct_x', '-5', '--reference', 'r']);
    expect(badAmount.status).toBe(2);
    expect(badAmount.body.code).toBe('USAGE');
    // The watcher's references are its own (a manual credit under one would stall its chunk).
    const watcherReference = await json(['accounts', 'credit', 'acct_x', '5', '--reference', 'sol:abc:0']);
    expect(watcherReference.status).toBe(2);
    expect(watcherReference.body.error).toContain('sibyl deposits assign');
    const badWallet = await json(['accounts', 'create', '--wallet', 'not-a-wallet']);
    expect(badWallet.body.code).toBe('VALIDATION_ERROR');
    const badPermissions = await json(['keys', 'create', 'acct_x', '--permissions', 'price,root']);
    expect(badPermissions.body.code).toBe('USAGE');
  });

  it('refuses a bad environment with a readable message', async () => {
    const result = await runCli(['migrate'], { ...env, PORT: 'eighty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT');
  });

  it('lists accounts, their transactions and keys, revokes a key; a bare sibyl prints usage and exits 2', async () => {
    const bare = await runCli([], env);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('Usage: sibyl <command>');

    const created = (await json(['accounts', 'create', '--mode', 'sandbox'])).body;
    expect(created.id).toBe(created.accountId); // the API's name, and the old one for a release
    await json(['accounts', 'credit', created.id, '3.00', '--reference', `cli-list-${created.id}`]);
    const listed = (await json(['accounts', 'list'])).body;
    expect(listed.accounts[0]).toMatchObject({ id: created.id, balanceUsd: '3.00' });
    expect(listed.accounts[0].webhookSecret).toBeUndefined();
    expect((await json(['accounts', 'transactions', created.id, '--kind', 'deposit'])).body).toMatchObject({
      transactions: [{ kind: 'deposit', amountUsd: '3.00', balanceAfterUsd: '3.00' }],
      hasMore: false,
    });

    const key = (await json(['keys', 'create', created.id, '--name', 'to revoke'])).body;
    expect((await json(['keys', 'list', created.id])).body).toMatchObject({
      total: 1,
      keys: [{ id: key.id, isActive: true }],
    });
    expect((await json(['keys', 'revoke', key.id])).body).toMatchObject({ id: key.id, isActive: false });
  });

  it('webhooks list and redeliver; with SECRET_ENCRYPTION_KEY, webhook secrets are sealed at rest', async () => {
    const sealedEnv = { ...env, SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const created = await runCli(['accounts', 'create', '--mode', 'sandbox', '--json'], sealedEnv);
    const account = JSON.parse(created.stdout);
    expect(account.webhookSecret).toMatch(/^whsec_/);
    const shown = JSON.parse(
      (await runCli(['accounts', 'show', account.accountId, '--json'], sealedEnv)).stdout,
    );
    expect(shown.webhookSecret).toBe(account.webhookSecret);

    await withDatabase(async (db) => {
      const [row] = await db.query<{ webhook_secret: string }>(
        'SELECT webhook_secret FROM webhook_secrets WHERE account_id = $1',
        [account.accountId],
      );
      expect(row?.webhook_secret).toMatch(/^enc1:/);
      expect(row?.webhook_secret).not.toContain(account.webhookSecret.slice(6));
      await db.query(
        `INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, attempts, max_attempts, created_at, finished_at)
         VALUES ('msg_cli', $1, 'https://hooks.example.com/x', 'price', 'req_cli', '{}', 'CALLBACK_FAILED', 8, 8, now(), now())`,
        [account.accountId],
      );
    });

    const listed = await json([
      'webhooks',
      'list',
      '--account',
      account.accountId,
      '--status',
      'CALLBACK_FAILED',
    ]);
    expect(listed.body).toMatchObject({
      total: 1,
      deliveries: [{ id: 'msg_cli', status: 'CALLBACK_FAILED' }],
    });
    expect((await json(['webhooks', 'redeliver', 'msg_cli'])).body).toMatchObject({
      id: 'msg_cli',
      status: 'PENDING',
    });
    expect(await json(['webhooks', 'redeliver', 'msg_nope'])).toMatchObject({
      status: 1,
      body: { code: 'NOT_FOUND' },
    });
    expect((await runCli(['webhooks', 'list', '--status', 'LOST'], env)).status).toBe(2);
  });
});

/** The test database, which the in-process commands share. */
async function withDatabase(fn: (db: TestDatabase['db']) => Promise<void>): Promise<void> {
  await fn(database.db);
}
