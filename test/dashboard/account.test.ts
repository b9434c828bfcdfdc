import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { MAX_CSV_ENTRIES } from '../../src/dashboard/csv.js';
import { adjustBalance, creditDeposit } from '../../src/ledger/ledger.js';
import { isSolanaAddress } from '../../src/lib/base58.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';

/** The money pages' endpoints: overview, play money, funds, the ledger's CSV, keys, jobs, the webhook secret. */

const TREASURY = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
let ctx: TestContext;
let user: DashboardClient;
let ids: { live: string; sandbox: string };

beforeAll(async () => {
  ctx = await createTestContext({ config: { ...DASHBOARD_TEST_CONFIG, DEPOSIT_ADDRESS: TREASURY } });
  user = await DashboardClient.listening(ctx.app);
  await user.signIn();
  const session = (await user.call('GET', '/dashboard/api/auth/session')).body as {
    accounts: Record<'live' | 'sandbox', { id: string }>;
  };
  ids = { live: session.accounts.live.id, sandbox: session.accounts.sandbox.id };
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

async function sandboxKey(permissions?: string[]): Promise<string> {
  const created = await user.call('POST', '/dashboard/api/sandbox/keys', {
    body: { name: 'test', ...(permissions ? { permissions } : {}) },
  });
  expect(created.status).toBe(200);
  return created.body.key as string;
}

describe('overview', () => {
  it('shows the balance, spend today and this month; a live account never funded is not “low”', async () => {
    const live = (await user.call('GET', '/dashboard/api/live/overview')).body;
    expect(live).toMatchObject({
      account: { id: ids.live, mode: 'live', balanceUsd: '0.00' },
      today: { requests: 0, spendUsd: '0.00' },
      funded: false,
      lowBalance: false,
      lowBalanceThresholdUsd: '5.00',
    });
    const key = await sandboxKey();
    for (let i = 0; i < 2; i++) await ctx.request(key, { method: 'GET', url: '/api/v1/price/SOL' });
    const sandbox = (await user.call('GET', '/dashboard/api/sandbox/overview')).body;
    expect(sandbox).toMatchObject({
      account: { id: ids.sandbox, mode: 'sandbox' },
      today: { requests: 2, spendUsd: '0.02' },
      month: { requests: 2, spendUsd: '0.02' },
      lowBalance: false,
    });
    expect(sandbox.account).not.toHaveProperty('webhookSecret');
    expect(sandbox.funded).toBe(true);
  });

  it('warns below the threshold once the account was funded, even when it is empty again', async () => {
    const other = new DashboardClient(user.base);
    await other.signIn();
    const session = (await other.call('GET', '/dashboard/api/auth/session')).body as {
      accounts: { live: { id: string } };
    };
    const liveId = session.accounts.live.id;
    await creditDeposit(createContext(ctx.database.db, systemClock), {
      accountId: liveId,
      amountMicros: 3_000_000n,
      reference: `operator:overview-test:${liveId}`,
    });
    expect((await other.call('GET', '/dashboard/api/live/overview')).body).toMatchObject({
      account: { balanceUsd: '3.00' },
      funded: true,
      lowBalance: true,
    });
    await adjustBalance(createContext(ctx.database.db, systemClock), {
      accountId: liveId,
      amountMicros: -3_000_000n,
      memo: 'spent',
    });
    expect((await other.call('GET', '/dashboard/api/live/overview')).body).toMatchObject({
      account: { balanceUsd: '0.00' },
      funded: true,
      lowBalance: true,
    });
  });
});

describe('play money', () => {
  it('adds 100.00 to the sandbox account up to 1,000.00, exactly, however many clicks race', async () => {
    const start = await balanceOf(ctx.database.db, ids.sandbox);
    const answers = await Promise.all(
      Array.from({ length: 15 }, () => user.call('POST', '/dashboard/api/sandbox/play-money')),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await balanceOf(ctx.database.db, ids.sandbox)).toBe(1_000_000_000n);
    const credited = answers.reduce((sum, a) => sum + Number(a.body.creditedUsd), 0);
    expect(credited).toBeCloseTo(1000 - Number(start) / 1e6, 6);
    const more = await user.call('POST', '/dashboard/api/sandbox/play-money');
    expect(more.body).toMatchObject({ creditedUsd: '0.00', balanceUsd: '1000.00', capUsd: '1000.00' });
    const [entries] = await ctx.database.db.query<{ n: bigint }>(
      "SELECT count(*) AS n FROM ledger_entries WHERE account_id = $1 AND reference LIKE 'play-money:%'",
      [ids.sandbox],
    );
    expect(Number(entries?.n)).toBe(answers.filter((a) => a.body.creditedUsd !== '0.00').length);
  });

  it('is for the sandbox only', async () => {
    const refused = await user.call('POST', '/dashboard/api/live/play-money');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await balanceOf(ctx.database.db, ids.live)).toBe(0n);
  });
});

describe('funds', () => {
  it('live: the treasury address, a stable reference key, Solana Pay links for SOL and USDC, the deposits', async () => {
    await creditDeposit(createContext(ctx.database.db, systemClock), {
      accountId: ids.live,
      amountMicros: 25_000_000n,
      reference:
        'sol:5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW:0',
      memo: 'credited by the operator',
    });
    const funds = (await user.call('GET', '/dashboard/api/live/funds')).body;
    const reference = funds.referenceKey as string;
    expect(isSolanaAddress(reference)).toBe(true);
    expect(funds).toMatchObject({
      watcher: { enabled: false },
      creditedBy: 'operator',
      depositAddress: TREASURY,
      usdcMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      minimumUsd: '1.00',
      solanaPayUrl: `solana:${TREASURY}?reference=${reference}&label=Sibyl&message=Sibyl%20account%20deposit`,
      solanaPayUsdcUrl: `solana:${TREASURY}?spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&reference=${reference}&label=Sibyl&message=Sibyl%20account%20deposit`,
      deposits: [
        {
          status: 'credited',
          usdValue: '25.00',
          signature:
            '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
          memo: 'credited by the operator',
          token: null,
        },
      ],
    });
    expect((await user.call('GET', '/dashboard/api/live/funds')).body.referenceKey).toBe(reference);
    const [row] = await ctx.database.db.query<{ deposit_reference: string }>(
      'SELECT deposit_reference FROM accounts WHERE id = $1',
      [ids.live],
    );
    expect(row?.deposit_reference).toBe(reference);
  });

  it('sandbox: never from the chain; play money instead', async () => {
    const funds = (await user.call('GET', '/dashboard/api/sandbox/funds')).body;
    expect(funds).toMatchObject({
      creditedBy: 'play-money',
      depositAddress: null,
      referenceKey: null,
      solanaPayUrl: null,
      solanaPayUsdcUrl: null,
    });
    expect((funds.deposits as unknown[]).length).toBeGreaterThan(1);
  });
});

describe('the ledger as CSV', () => {
  it('is the entries of the range, oldest first, with a header; text a spreadsheet would run is neutralised', async () => {
    await creditDeposit(createContext(ctx.database.db, systemClock), {
      accountId: ids.live,
      amountMicros: 1_000_000n,
      reference: '=HYPERLINK("https://evil.example")',
      memo: '+1, "quoted"\nnext line',
    });
    const answer = await user.call('GET', '/dashboard/api/live/transactions.csv');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toMatch(
      /^attachment; filename="sibyl-live-transactions-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const lines = answer.text.split('\r\n');
    expect(lines[0]).toBe(
      'id,createdAt,kind,amountUsd,balanceAfterUsd,operation,requestId,keyId,reference,refundOf,memo',
    );
    expect(lines.at(-1)).toBe('');
    expect(lines[1]).toMatch(/^\d+,[^,]+,deposit,25\.00,25\.00,,,,sol:5VER/);
    expect(lines[2]).toMatch(
      /^\d+,[^,]+,deposit,1\.00,26\.00,,,,"'=HYPERLINK\(""https:\/\/evil\.example""\)",,"'\+1, ""quoted""\nnext line"$/,
    );
    const deposits = await user.call('GET', '/dashboard/api/sandbox/transactions.csv?kind=charge');
    expect(
      deposits.text
        .split('\r\n')
        .slice(1, -1)
        .every((line) => line.includes(',charge,-0.01,')),
    ).toBe(true);
    const bad = await user.call('GET', '/dashboard/api/live/transactions.csv?limit=5');
    expect(bad.status).toBe(400);
    expect(MAX_CSV_ENTRIES).toBe(50_000);
  });
});

describe('keys', () => {
  it('creates a key with every setting, shows its secret once, and the key works on the API', async () => {
    const created = await user.call('POST', '/dashboard/api/live/keys', {
      body: {
        name: 'every setting',
        permissions: ['price', 'keys'],
        expiresAt: new Date(ctx.clock.now().getTime() + 86_400_000).toISOString(),
        allowedIps: ['127.0.0.1', '::1'],
        allowedOrigins: ['https://app.example.com'],
        rateLimit: { requestsPerSecond: 5, burst: 10 },
        quotas: { dailyRequests: 100, monthlySpendUsd: '12.50' },
      },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: 'every setting',
      key: expect.stringMatching(/^pk_live_/),
      permissions: ['price', 'keys'],
      allowedIps: ['127.0.0.1', '::1'],
      ipRestrictionEnabled: true,
      allowedOrigins: ['https://app.example.com'],
      originRestrictionEnabled: true,
      rateLimit: { requestsPerSecond: 5, burst: 10, isDefault: false },
      quotas: { dailyRequests: 100, monthlyRequests: null, dailySpendUsd: null, monthlySpendUsd: '12.50' },
    });
    const listed = (await user.call('GET', '/dashboard/api/live/keys')).body as {
      keys: Record<string, unknown>[];
    };
    const mine = listed.keys.find((k) => k.id === created.body.id);
    expect(mine).toBeDefined();
    expect(mine).not.toHaveProperty('key');
    expect(mine?.usage).toBeDefined();
    // The key works on the API, within its restrictions (from 127.0.0.1).
    const keys = await ctx.request(created.body.key as string, { method: 'GET', url: '/api/v1/keys' });
    expect(keys.statusCode).toBe(200);
    const invalid = await user.call('POST', '/dashboard/api/live/keys', {
      body: { name: 'bad', allowedIps: ['300.1.1.1'], permissions: ['nope'] },
    });
    expect(invalid.status).toBe(400);
  });

  it('rotates (a second rotation in the grace period is refused) and revokes, as the API does', async () => {
    const created = await user.call('POST', '/dashboard/api/sandbox/keys', { body: { name: 'rotating' } });
    const id = created.body.id as string;
    const rotated = await user.call('POST', `/dashboard/api/sandbox/keys/${id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      newKey: { name: 'rotating', key: expect.stringMatching(/^pk_test_/), rotatedFrom: id },
      oldKey: { id, rotatedTo: rotated.body.newKey && (rotated.body.newKey as { id: string }).id },
    });
    const again = await user.call('POST', `/dashboard/api/sandbox/keys/${id}/rotate`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('KEY_ROTATION_IN_PROGRESS');
    const newKey = rotated.body.newKey as { id: string; key: string };
    expect((await ctx.request(newKey.key, { method: 'GET', url: '/api/v1/keys' })).statusCode).toBe(200);
    const revoked = await user.call('DELETE', `/dashboard/api/sandbox/keys/${newKey.id}`);
    expect(revoked.body).toMatchObject({ id: newKey.id, isActive: false, revokedAt: expect.any(String) });
    const refused = await ctx.request(newKey.key, { method: 'GET', url: '/api/v1/keys' });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('API_KEY_REVOKED');
    const renamed = await user.call('PATCH', `/dashboard/api/sandbox/keys/${id}`, {
      body: { name: 'renamed' },
    });
    expect(renamed.body).toMatchObject({ id, name: 'renamed' });
  });

  it('holds an account to 25 active keys', async () => {
    const fresh = new DashboardClient(user.base);
    await fresh.signIn();
    for (let i = 0; i < 25; i++) {
      expect((await fresh.call('POST', '/dashboard/api/live/keys', { body: { name: `k${i}` } })).status).toBe(
        200,
      );
    }
    const over = await fresh.call('POST', '/dashboard/api/live/keys', { body: { name: 'one too many' } });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: 'MAX_KEYS_EXCEEDED', details: { maxKeys: 25 } });
  });
});

describe('jobs', () => {
  it('cancels a job with its full refund, through the API’s verb and rules', async () => {
    const key = await sandboxKey();
    const scheduled = await ctx.request(key, {
      method: 'POST',
      url: '/api/v1/price/schedule',
      payload: {
        symbol: 'SOL',
        resolutionTimestamp: new Date(ctx.clock.now().getTime() + 3_600_000).toISOString(),
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    });
    const jobId = scheduled.json().jobId as string;
    const before = await balanceOf(ctx.database.db, ids.sandbox);
    const detail = (await user.call('GET', `/dashboard/api/sandbox/price/scheduled/${jobId}`)).body;
    expect(detail).toMatchObject({
      jobId,
      status: 'PENDING',
      canCancel: true,
      costUsd: '0.05',
      request: { symbol: 'SOL' },
    });
    const cancelled = await user.call('POST', `/dashboard/api/sandbox/price/scheduled/${jobId}/cancel`);
    expect(cancelled.body).toMatchObject({ jobId, status: 'cancelled', refundUsd: '0.05' });
    expect(await balanceOf(ctx.database.db, ids.sandbox)).toBe(before + 50_000n);
    const twice = await user.call('POST', `/dashboard/api/sandbox/price/scheduled/${jobId}/cancel`);
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('JOB_CANNOT_CANCEL');
    expect((await user.call('POST', `/dashboard/api/sandbox/ai/scheduled/${jobId}/cancel`)).body.code).toBe(
      'JOB_NOT_FOUND',
    );
  });
});

describe('webhook secret', () => {
  it('is revealed on request (the API’s secret) and rotated', async () => {
    const key = await sandboxKey();
    const api = (await ctx.request(key, { method: 'GET', url: '/api/v1/account' })).json().webhookSecret;
    const revealed = await user.call('POST', '/dashboard/api/sandbox/account/webhook-secret');
    expect(revealed.body.webhookSecret).toBe(api);
    // A GET would answer the secret without the Origin check: the dashboard's twin is a POST only.
    expect((await user.call('GET', '/dashboard/api/sandbox/account/webhook-secret')).status).toBe(404);
    const rotated = await user.call('POST', '/dashboard/api/sandbox/account/webhook-secret/rotate');
    expect(rotated.body.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.body.webhookSecret).not.toBe(api);
    expect(
      (await user.call('POST', '/dashboard/api/sandbox/account/webhook-secret')).body.webhookSecret,
    ).toBe(rotated.body.webhookSecret);
  });
});
