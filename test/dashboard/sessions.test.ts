import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { silentLog } from '../../src/logger.js';
import { createRetention } from '../../src/retention/retention.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { usingPostgres } from '../helpers/db.js';
import { TestWallet, verifyBody } from '../helpers/wallet.js';

/** Dashboard sessions (docs/dashboard.md#sessions), over real HTTP: lifetimes, logout everywhere, Origin, the sign-in limit, upkeep. */

let ctx: TestContext;
let client: DashboardClient;

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  client = await DashboardClient.listening(ctx.app);
});
afterAll(async () => {
  await ctx.close();
});

describe('sessions', () => {
  it('keeps a session alive while used: it ends 12 hours after its last use, or 7 days after sign-in', async () => {
    const user = new DashboardClient(client.base);
    await user.signIn();
    const hour = 60 * 60 * 1000;
    const start = ctx.clock.now().getTime();
    try {
      // Used every 11 hours: alive for the 7 days…
      for (let at = 11 * hour; at < 7 * 24 * hour; at += 11 * hour) {
        ctx.clock.set(new Date(start + at));
        expect((await user.call('GET', '/dashboard/api/auth/session')).status, `after ${at / hour} h`).toBe(
          200,
        );
      }
      // …and not one millisecond more.
      ctx.clock.set(new Date(start + 7 * 24 * hour));
      const ended = await user.call('GET', '/dashboard/api/auth/session');
      expect(ended.status).toBe(401);
      expect(ended.body).toEqual({
        error: 'Not signed in, or the session ended: sign in with your wallet',
        code: 'SESSION_EXPIRED',
        requestId: expect.stringMatching(/^req_/),
      });
      ctx.clock.set(new Date(start));
      const idle = new DashboardClient(client.base);
      await idle.signIn();
      ctx.clock.set(new Date(start + 12 * hour - 1));
      expect((await idle.call('GET', '/dashboard/api/auth/session')).status).toBe(200);
      ctx.clock.set(new Date(start + 24 * hour - 2));
      expect((await idle.call('GET', '/dashboard/api/auth/session')).status).toBe(200);
      ctx.clock.set(new Date(start + 36 * hour - 2));
      expect((await idle.call('GET', '/dashboard/api/auth/session')).status).toBe(401);
    } finally {
      ctx.clock.set(new Date(start));
    }
  });

  it('logout ends the session and clears the cookie; an unknown or malformed cookie is no session', async () => {
    const user = new DashboardClient(client.base);
    await user.signIn();
    const out = await user.call('POST', '/dashboard/api/auth/logout');
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ signedOut: true });
    expect(out.headers.get('set-cookie')).toMatch(
      /^sibyl_session=; Max-Age=0; Path=\/dashboard; HttpOnly; SameSite=Strict$/,
    );
    expect((await user.call('GET', '/dashboard/api/auth/session')).status).toBe(401);
    for (const cookie of [
      'sibyl_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'sibyl_session=short',
      'other=1',
      '',
    ]) {
      const answer = await user.call('GET', '/dashboard/api/auth/session', { cookie });
      expect(answer.status, cookie).toBe(401);
      expect(answer.body.code).toBe('SESSION_EXPIRED');
    }
    // The session's row is gone: only the hash was ever stored.
    const [row] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM dashboard_sessions WHERE token_hash = sha256(convert_to($1, $2))',
      [user.cookie?.split('=')[1], 'UTF8'],
    );
    expect(row?.n).toBe(0n);
  });

  it('never takes an API key for a session, and a session cookie is no API key', async () => {
    const user = new DashboardClient(client.base);
    await user.signIn();
    const account = await ctx.createAccount();
    const withKey = await user.call('GET', '/dashboard/api/sandbox/keys', {
      cookie: null,
      headers: { authorization: `Bearer ${account.key}` },
    });
    expect(withKey.status).toBe(401);
    expect(withKey.body.code).toBe('SESSION_EXPIRED');
    const onApi = await user.call('GET', '/api/v1/account');
    expect(onApi.status).toBe(401);
    expect(onApi.body.code).toBe('INVALID_API_KEY');
  });
});

describe('origin', () => {
  it('refuses a state-changing request without an Origin, or from another origin, before anything else', async () => {
    const user = new DashboardClient(client.base);
    await user.signIn();
    const changes: [string, string][] = [
      ['POST', '/dashboard/api/auth/challenge'],
      ['POST', '/dashboard/api/auth/verify'],
      ['POST', '/dashboard/api/auth/logout'],
      ['POST', '/dashboard/api/live/keys'],
      ['POST', '/dashboard/api/sandbox/play-money'],
    ];
    for (const [method, path] of changes) {
      for (const origin of [null, 'https://evil.example', `${client.base}.evil.example`, 'null']) {
        const answer = await user.call(method, path, { origin, body: {} });
        expect(answer.status, `${path} ${origin}`).toBe(403);
        expect(answer.body).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
      }
    }
    // The session survived the refused logouts.
    expect((await user.call('GET', '/dashboard/api/auth/session')).status).toBe(200);
  });
});

describe('rate limit', () => {
  it('limits sign-in attempts per client address: 429 with Retry-After', async () => {
    const limited = await createTestContext({
      database: ctx.database,
      config: { SIGN_IN_LIMIT_BURST: '3', SIGN_IN_LIMIT_PER_SECOND: '0.1' },
    });
    try {
      const other = await DashboardClient.listening(limited.app);
      for (let i = 0; i < 3; i++) await other.challenge();
      const refused = await other.call('POST', '/dashboard/api/auth/challenge', { body: {} });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('10');
      expect(refused.body).toMatchObject({
        code: 'RATE_LIMIT_EXCEEDED',
        details: { limit: 3, retryAfterSeconds: 10 },
      });
      // Verifying draws on the same bucket.
      const wallet = new TestWallet();
      const verify = await other.call('POST', '/dashboard/api/auth/verify', {
        body: verifyBody(wallet.address, wallet.signIn({})),
      });
      expect(verify.status).toBe(429);
      limited.clock.advance(10_000);
      expect((await other.call('POST', '/dashboard/api/auth/challenge', { body: {} })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('two instances', () => {
  it('a logout on one instance ends the session on the other (the sessions are rows)', async () => {
    // On PostgreSQL the second instance has a pool of its own, as another process would.
    const db = usingPostgres ? new PostgresDatabase(ctx.database.location) : ctx.database.db;
    const second = await createTestContext({
      database: { ...ctx.database, db },
      config: DASHBOARD_TEST_CONFIG,
    });
    try {
      const other = await DashboardClient.listening(second.app);
      const here = new DashboardClient(client.base);
      await here.signIn();
      other.cookie = here.cookie;
      expect((await other.call('GET', '/dashboard/api/auth/session')).status).toBe(200);
      expect((await here.call('POST', '/dashboard/api/auth/logout')).status).toBe(200);
      expect((await other.call('GET', '/dashboard/api/auth/session')).status).toBe(401);
    } finally {
      await second.close();
      if (db !== ctx.database.db) await db.close();
    }
  });
});

describe('upkeep', () => {
  it('retention deletes sessions and challenges a day after they end, and nothing younger', async () => {
    const { db } = ctx.database;
    const { wallet } = await new DashboardClient(client.base).signIn();
    const nonce = String((await client.challenge()).nonce);
    const prune = createRetention({
      db,
      clock: ctx.clock,
      log: silentLog,
      settings: { ...ctx.config.retention, batchPauseMs: 0 },
    });
    const left = async () =>
      (
        await db.query<{ session: bigint; challenge: bigint }>(
          `SELECT (SELECT count(*) FROM dashboard_sessions WHERE wallet_address = $1) AS session,
                  (SELECT count(*) FROM sign_in_challenges WHERE nonce = $2) AS challenge`,
          [wallet.address, nonce],
        )
      )[0];
    const now = ctx.clock.now().getTime();
    const minute = 60_000;
    const hour = 60 * minute;
    // The challenge ends after 5 minutes: deleted a day later.
    await prune.run(new Date(now + 24 * hour + 4 * minute));
    expect(await left()).toEqual({ session: 1n, challenge: 1n });
    await prune.run(new Date(now + 24 * hour + 6 * minute));
    expect(await left()).toEqual({ session: 1n, challenge: 0n });
    // The session ends after 12 idle hours: deleted a day later.
    await prune.run(new Date(now + 36 * hour - minute));
    expect(await left()).toEqual({ session: 1n, challenge: 0n });
    await prune.run(new Date(now + 36 * hour + minute));
    expect(await left()).toEqual({ session: 0n, challenge: 0n });
  });
});
