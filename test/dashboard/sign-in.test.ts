import { createSignInMessageText } from '@solana/wallet-standard-util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { dashboardTasks } from '../../src/dashboard/index.js';
import { CHALLENGE_TTL_MS } from '../../src/dashboard/siws.js';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type Answer, DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { usingPostgres } from '../helpers/db.js';
import { TestWallet, verifyBody } from '../helpers/wallet.js';

/** Sign-In With Solana's checks (DESIGN §12), over real HTTP against a listening app. */

let ctx: TestContext;
let client: DashboardClient;

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  client = await DashboardClient.listening(ctx.app);
});
afterAll(async () => {
  await ctx.close();
});

type Input = Record<string, unknown>;

function expectRejected(answer: Answer, reason: string): void {
  expect(answer.status).toBe(401);
  expect(answer.body).toEqual({
    error: expect.stringMatching(/^Sign-in rejected: /),
    code: 'SIGN_IN_REJECTED',
    details: { reason },
    requestId: expect.stringMatching(/^req_/),
  });
  expect(answer.headers.get('set-cookie')).toBeNull();
}

/** Signs `text` as `wallet` and sends it as the verify body for `address`. */
function verifyText(wallet: TestWallet, text: string, address = wallet.address): Promise<Answer> {
  const signedMessage = new TextEncoder().encode(text);
  return client.call('POST', '/dashboard/api/auth/verify', {
    body: verifyBody(address, { signedMessage, signature: wallet.sign(signedMessage) }),
    cookie: null,
  });
}

const textOf = (input: Input, address: string) =>
  createSignInMessageText({ ...input, address } as Parameters<typeof createSignInMessageText>[0]);

describe('challenge', () => {
  it('makes and stores a SIWS input for this server: domain, URI, statement, chain, a fresh nonce, 5 minutes', async () => {
    const now = ctx.clock.now();
    const input = await client.challenge();
    const origin = new URL(client.base);
    expect(input).toEqual({
      domain: origin.host,
      uri: origin.origin,
      statement: 'Sign in to the Sibyl dashboard.',
      version: '1',
      chainId: 'mainnet',
      nonce: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{16,}$/),
      issuedAt: now.toISOString(),
      expirationTime: new Date(now.getTime() + 5 * 60_000).toISOString(),
    });
    expect((await client.challenge()).nonce).not.toBe(input.nonce);
    const [row] = await ctx.database.db.query<{ input: Input }>(
      'SELECT input FROM sign_in_challenges WHERE nonce = $1',
      [input.nonce],
    );
    expect(row?.input).toEqual(input);
  });

  it('names the address when asked, and refuses one that is not a Solana address', async () => {
    const wallet = new TestWallet();
    expect((await client.challenge(wallet.address)).address).toBe(wallet.address);
    const bad = await client.call('POST', '/dashboard/api/auth/challenge', {
      body: { address: 'not-an-address!' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const offCurve = await client.call('POST', '/dashboard/api/auth/challenge', {
      body: { address: '1111111111111111111111111111111' },
    });
    expect(offCurve.body).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('verify', () => {
  it('signs a new wallet in: its live account (balance 0, the wallet) and a sandbox account with 100.00', async () => {
    const fresh = new DashboardClient(client.base);
    const { wallet, answer } = await fresh.signIn();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      created: true,
      account: {
        mode: 'live',
        status: 'active',
        walletAddress: wallet.address,
        balanceUsd: '0.00',
        currency: 'USD',
      },
    });
    const session = await fresh.call('GET', '/dashboard/api/auth/session');
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      wallet: wallet.address,
      accounts: {
        live: { id: (answer.body.account as { id: string }).id, balanceUsd: '0.00', status: 'active' },
        sandbox: { balanceUsd: '100.00', status: 'active' },
      },
    });
    // A second sign-in finds the same accounts.
    const again = new DashboardClient(client.base);
    const second = await again.signIn(wallet);
    expect(second.answer.body).toMatchObject({
      created: false,
      account: { id: (answer.body.account as { id: string }).id },
    });
  });

  it('sets the session cookie: HttpOnly, SameSite=Strict, Path=/dashboard, 7 days, not Secure over http', async () => {
    const { answer } = await new DashboardClient(client.base).signIn();
    const cookie = answer.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(
      /^sibyl_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/dashboard; HttpOnly; SameSite=Strict$/,
    );
  });

  it('works for a wallet with only signMessage: the challenge names the address, the page builds the text', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge(wallet.address);
    const answer = await verifyText(wallet, textOf(input, wallet.address));
    expect(answer.status).toBe(200);
    expect(answer.body.created).toBe(true);
  });

  it('refuses a replayed signature, and a second message with a used nonce', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge();
    const body = verifyBody(wallet.address, wallet.signIn(input));
    expect((await client.call('POST', '/dashboard/api/auth/verify', { body, cookie: null })).status).toBe(
      200,
    );
    expectRejected(
      await client.call('POST', '/dashboard/api/auth/verify', { body, cookie: null }),
      'nonce_used',
    );
    // The same nonce signed again by another wallet (a different message) is still spent.
    const other = new TestWallet();
    expectRejected(await verifyText(other, textOf(input, other.address)), 'nonce_used');
  });

  it('refuses an input after its 5 minutes (the injected clock)', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge();
    ctx.clock.advance(CHALLENGE_TTL_MS + 1);
    try {
      expectRejected(await verifyText(wallet, textOf(input, wallet.address)), 'expired');
    } finally {
      ctx.clock.advance(-(CHALLENGE_TTL_MS + 1));
    }
    // At its last millisecond it is still good.
    const last = await client.challenge();
    ctx.clock.advance(CHALLENGE_TTL_MS);
    try {
      expect((await verifyText(wallet, textOf(last, wallet.address))).status).toBe(200);
    } finally {
      ctx.clock.advance(-CHALLENGE_TTL_MS);
    }
  });

  it("refuses another wallet's signature", async () => {
    const wallet = new TestWallet();
    const thief = new TestWallet();
    const input = await client.challenge();
    const text = textOf(input, wallet.address);
    // The thief signs the text naming the victim, and claims to be the victim.
    expectRejected(await verifyText(thief, text, wallet.address), 'signature');
    // A signature of other bytes by the right wallet.
    const signedMessage = new TextEncoder().encode(text);
    const wrong = wallet.sign(new TextEncoder().encode(`${text} `));
    expectRejected(
      await client.call('POST', '/dashboard/api/auth/verify', {
        body: verifyBody(wallet.address, { signedMessage, signature: wrong }),
        cookie: null,
      }),
      'signature',
    );
  });

  it('refuses a message for another domain or another URI', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge();
    expectRejected(
      await verifyText(wallet, textOf({ ...input, domain: 'evil.example' }, wallet.address)),
      'domain',
    );
    expectRejected(
      await verifyText(wallet, textOf({ ...input, uri: 'https://evil.example' }, wallet.address)),
      'domain',
    );
    // The nonce was not spent by the refusals.
    expect((await verifyText(wallet, textOf(input, wallet.address))).status).toBe(200);
  });

  it('refuses a changed statement or any other changed field, and an address the input was not issued to', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge();
    expectRejected(
      await verifyText(wallet, textOf({ ...input, statement: 'Transfer everything.' }, wallet.address)),
      'message',
    );
    expectRejected(
      await verifyText(
        wallet,
        textOf({ ...input, expirationTime: '2099-01-01T00:00:00.000Z' }, wallet.address),
      ),
      'message',
    );
    expectRejected(await verifyText(wallet, `${textOf(input, wallet.address)}\n`), 'message');
    const named = await client.challenge(new TestWallet().address);
    expectRejected(await verifyText(wallet, textOf(named, wallet.address)), 'message');
  });

  it('refuses a tampered nonce, a nonce never issued, and text that is not a SIWS message', async () => {
    const wallet = new TestWallet();
    const input = await client.challenge();
    const nonce = String(input.nonce);
    const tampered = `${nonce.slice(0, -1)}${nonce.endsWith('A') ? 'B' : 'A'}`;
    expectRejected(
      await verifyText(wallet, textOf({ ...input, nonce: tampered }, wallet.address)),
      'nonce_unknown',
    );
    expectRejected(
      await verifyText(wallet, textOf({ ...input, nonce: 'NeverIssuedByThisServer1' }, wallet.address)),
      'nonce_unknown',
    );
    const { nonce: _n, ...withoutNonce } = input;
    expectRejected(await verifyText(wallet, textOf(withoutNonce, wallet.address)), 'nonce_unknown');
    expectRejected(await verifyText(wallet, 'Please sign in.'), 'message');
    const invalidUtf8 = Buffer.from([0xc3, 0x28]);
    expectRejected(
      await client.call('POST', '/dashboard/api/auth/verify', {
        body: verifyBody(wallet.address, { signedMessage: invalidUtf8, signature: wallet.sign(invalidUtf8) }),
        cookie: null,
      }),
      'message',
    );
  });

  it('answers a malformed body 400 VALIDATION_ERROR, naming the fields', async () => {
    const wallet = new TestWallet();
    const good = verifyBody(wallet.address, wallet.signIn(await client.challenge()));
    const cases: [unknown, string][] = [
      [{}, 'body.output'],
      [{ output: { ...good.output, signature: 'AAAA' } }, 'body.output.signature'],
      [{ output: { ...good.output, signature: '!'.repeat(88) } }, 'body.output.signature'],
      [{ output: { ...good.output, signedMessage: 'not base64 ***' } }, 'body.output.signedMessage'],
      [{ output: { ...good.output, account: { address: '0OIl' } } }, 'body.output.account.address'],
      [{ output: { ...good.output, account: {} } }, 'body.output.account.address'],
      [{ ...good, extra: true }, 'body.extra'],
      [[], 'body'],
    ];
    for (const [body, path] of cases) {
      const answer = await client.call('POST', '/dashboard/api/auth/verify', { body, cookie: null });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_ERROR');
      const problems = (answer.body.details as { problems: { path: string }[] }).problems;
      expect(problems.map((p) => p.path)).toContain(path);
    }
    const notJson = await client.call('POST', '/dashboard/api/auth/verify', {
      body: '{"output":',
      cookie: null,
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('VALIDATION_ERROR');
  });

  it('signs a wallet the operator gave to an account in to that account', async () => {
    const wallet = new TestWallet();
    const given = await createAccount(
      ctx.database.db,
      ctx.clock,
      { mode: 'live', walletAddress: wallet.address },
      clearSecretBox,
    );
    const { answer } = await new DashboardClient(client.base).signIn(wallet);
    expect(answer.body).toMatchObject({
      created: false,
      account: { id: given.id, walletAddress: wallet.address },
    });
  });

  it('creates one pair of accounts when a wallet signs in twice at once', async () => {
    const wallet = new TestWallet();
    const inputs = await Promise.all([client.challenge(), client.challenge(), client.challenge()]);
    const answers = await Promise.all(
      inputs.map((input) =>
        client.call('POST', '/dashboard/api/auth/verify', {
          body: verifyBody(wallet.address, wallet.signIn(input)),
          cookie: null,
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const ids = new Set(answers.map((a) => (a.body.account as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.body.created === true)).toHaveLength(1);
    const [count] = await ctx.database.db.query<{ accounts: bigint; wallets: bigint }>(
      `SELECT (SELECT count(*) FROM accounts WHERE wallet_address = $1) AS accounts,
              (SELECT count(*) FROM dashboard_wallets WHERE address = $1) AS wallets`,
      [wallet.address],
    );
    expect(count).toEqual({ accounts: 1n, wallets: 1n });
  });
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
  it('deletes sessions and challenges a day after they end, and nothing younger', async () => {
    const { db } = ctx.database;
    const { wallet } = await new DashboardClient(client.base).signIn();
    const nonce = String((await client.challenge()).nonce);
    const [prune] = dashboardTasks({ db });
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
    await prune?.run(new Date(now + 24 * hour + 4 * minute));
    expect(await left()).toEqual({ session: 1n, challenge: 1n });
    await prune?.run(new Date(now + 24 * hour + 6 * minute));
    expect(await left()).toEqual({ session: 1n, challenge: 0n });
    // The session ends after 12 idle hours: deleted a day later.
    await prune?.run(new Date(now + 36 * hour - minute));
    expect(await left()).toEqual({ session: 1n, challenge: 0n });
    await prune?.run(new Date(now + 36 * hour + minute));
    expect(await left()).toEqual({ session: 0n, challenge: 0n });
  });
});
