import { createSignInMessageText } from '@solana/wallet-standard-util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { CHALLENGE_TTL_MS } from '../../src/dashboard/siws.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type Answer, DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { TestWallet, verifyBody } from '../helpers/wallet.js';

/** Sign-In With Solana's checks (docs/dashboard.md#sign-in-with-solana), over real HTTP against a listening app. */

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
      createContext(ctx.database.db, ctx.clock),
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
