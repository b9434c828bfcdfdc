import { createSignInMessageText } from '@solana/wallet-standard-util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { linkWallet, MAX_LINKED_WALLETS } from '../../src/accounts/index.js';
import { createContext } from '../../src/context.js';
import { CHALLENGE_TTL_MS } from '../../src/dashboard/siws.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type Answer, DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { TestWallet, verifyBody } from '../helpers/wallet.js';

/**
 * Linking another wallet to an account (docs/dashboard.md#your-wallets): proven by a SIWS signature
 * of the wallet being linked, checked as a sign-in is; a wallet belongs to one account. Real HTTP
 * against a listening app, on PGlite or PostgreSQL (TEST_DATABASE_URL).
 */

type Input = Record<string, unknown>;

let ctx: TestContext;
/** A signed-in user, and the id of its live account. */
let alice: DashboardClient;
let aliceWallet: TestWallet;
let aliceLive: string;

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  alice = await DashboardClient.listening(ctx.app);
  const signedIn = await alice.signIn();
  aliceWallet = signedIn.wallet;
  aliceLive = (signedIn.answer.body.account as { id: string }).id;
});
afterAll(async () => {
  await ctx.close();
});

async function newUser(): Promise<{ client: DashboardClient; wallet: TestWallet; live: string }> {
  const client = new DashboardClient(alice.base);
  const { wallet, answer } = await client.signIn();
  return { client, wallet, live: (answer.body.account as { id: string }).id };
}

async function linkChallenge(client: DashboardClient, address: string): Promise<Input> {
  const answer = await client.call('POST', '/dashboard/api/live/wallets/challenge', { body: { address } });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.input as Input;
}

const textOf = (input: Input, address: string) =>
  createSignInMessageText({ ...input, address } as Parameters<typeof createSignInMessageText>[0]);

/** What a wallet with `solana:signMessage` answers: the SIWS text of `input`, signed by `wallet`. */
function signedBy(wallet: TestWallet, input: Input, address = wallet.address) {
  return verifyBody(address, wallet.signIn({ ...input }));
}

function postLink(client: DashboardClient, body: unknown): Promise<Answer> {
  return client.call('POST', '/dashboard/api/live/wallets', { body });
}

/** Links `wallet` to the client's live account, as the page does. */
async function link(client: DashboardClient, wallet: TestWallet): Promise<Answer> {
  return postLink(client, signedBy(wallet, await linkChallenge(client, wallet.address)));
}

function expectRejected(answer: Answer, reason: string): void {
  expect(answer.status, answer.text).toBe(401);
  expect(answer.body).toMatchObject({ code: 'SIGN_IN_REJECTED', details: { reason } });
}

function expectInUse(answer: Answer): void {
  expect(answer.status, answer.text).toBe(409);
  expect(answer.body).toMatchObject({
    code: 'WALLET_IN_USE',
    error: expect.stringMatching(/a wallet belongs to one account/),
  });
}

async function walletsOf(client: DashboardClient) {
  const answer = await client.call('GET', '/dashboard/api/live/wallets');
  expect(answer.status).toBe(200);
  return answer.body.wallets as { address: string; kind: string; linkedAt: string | null }[];
}

describe('linking a wallet', () => {
  it('the input names the account and the wallet; signed by that wallet, it links it once', async () => {
    expect(await walletsOf(alice)).toEqual([
      { address: aliceWallet.address, kind: 'sign-in', linkedAt: null },
    ]);
    const second = new TestWallet();
    const input = await linkChallenge(alice, second.address);
    expect(input).toMatchObject({
      address: second.address,
      statement: `Link this wallet to Sibyl account ${aliceLive}: its SOL and USDC deposits are credited to that account.`,
      domain: new URL(alice.base).host,
      uri: new URL(alice.base).origin,
    });
    const answer = await postLink(alice, signedBy(second, input));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({
      wallet: { address: second.address, kind: 'linked', linkedAt: ctx.clock.now().toISOString() },
      linked: true,
    });
    expect(await walletsOf(alice)).toEqual([
      { address: aliceWallet.address, kind: 'sign-in', linkedAt: null },
      { address: second.address, kind: 'linked', linkedAt: ctx.clock.now().toISOString() },
    ]);
    const rows = await ctx.database.db.query('SELECT account_id FROM deposit_wallets WHERE address = $1', [
      second.address,
    ]);
    expect(rows).toEqual([{ account_id: aliceLive }]);

    // The same signed message again: the nonce was spent in the linking transaction.
    expectRejected(await postLink(alice, signedBy(second, input)), 'nonce_used');
    // Linking it again, or the sign-in wallet itself, is a harmless no-op.
    const again = await link(alice, second);
    expect(again.body).toMatchObject({ wallet: { address: second.address, kind: 'linked' }, linked: false });
    const own = await link(alice, aliceWallet);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      wallet: { address: aliceWallet.address, kind: 'sign-in', linkedAt: null },
      linked: false,
    });
    expect(await walletsOf(alice)).toHaveLength(2);
  });

  it('a wallet belongs to one account: another’s sign-in wallet or link is refused, and a linked wallet does not sign up', async () => {
    const bob = await newUser();
    expectInUse(await link(alice, bob.wallet));
    const bobs = new TestWallet();
    expect((await link(bob.client, bobs)).body).toMatchObject({ linked: true });
    expectInUse(await link(alice, bobs));
    // An account the operator gave a wallet (`accounts create --wallet`) owns it too, sandbox or live.
    const given = new TestWallet();
    await createAccount(
      createContext(ctx.database.db, ctx.clock),
      { mode: 'sandbox', walletAddress: given.address },
      clearSecretBox,
    );
    expectInUse(await link(alice, given));
    // The linked wallet's first sign-in would give it accounts of its own: refused.
    const signUp = await new DashboardClient(alice.base).call('POST', '/dashboard/api/auth/verify', {
      body: verifyBody(bobs.address, bobs.signIn(await alice.challenge())),
      cookie: null,
    });
    expectInUse(signUp);
    expect(signUp.headers.get('set-cookie')).toBeNull();
    const accounts = await ctx.database.db.query('SELECT id FROM accounts WHERE wallet_address = $1', [
      bobs.address,
    ]);
    expect(accounts).toEqual([]);
    expect(await walletsOf(alice)).not.toContainEqual(expect.objectContaining({ address: bobs.address }));
  });

  it('two accounts linking one wallet at once: one wins', async () => {
    const [carol, dave] = await Promise.all([newUser(), newUser()]);
    const contested = new TestWallet();
    const [c, d] = await Promise.all([
      linkChallenge(carol.client, contested.address),
      linkChallenge(dave.client, contested.address),
    ]);
    const answers = await Promise.all([
      postLink(carol.client, signedBy(contested, c)),
      postLink(dave.client, signedBy(contested, d)),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const rows = await ctx.database.db.query<{ account_id: string }>(
      'SELECT account_id FROM deposit_wallets WHERE address = $1',
      [contested.address],
    );
    expect(rows).toHaveLength(1);
    const winner = answers[0]?.status === 200 ? carol.live : dave.live;
    expect(rows[0]?.account_id).toBe(winner);

    // The verb itself, raced many times over the pool (on PostgreSQL: separate connections).
    for (let round = 0; round < 5; round++) {
      const wallet = new TestWallet().address;
      const results = await Promise.allSettled(
        [carol.live, dave.live, aliceLive].map((accountId) =>
          linkWallet(createContext(ctx.database.db, ctx.clock), { accountId, address: wallet }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('WALLET_IN_USE');
      }
    }
  });

  it(`an account links at most ${MAX_LINKED_WALLETS} wallets`, async () => {
    const erin = await newUser();
    const verbCtx = createContext(ctx.database.db, ctx.clock);
    for (let i = 0; i < MAX_LINKED_WALLETS; i++) {
      await linkWallet(verbCtx, { accountId: erin.live, address: new TestWallet().address });
    }
    const over = await link(erin.client, new TestWallet());
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({
      code: 'MAX_WALLETS_EXCEEDED',
      details: { maxWallets: MAX_LINKED_WALLETS },
    });
    // Its own sign-in wallet is no link: still a no-op, not a refusal.
    expect((await link(erin.client, erin.wallet)).body).toMatchObject({ linked: false });
    expect(await walletsOf(erin.client)).toHaveLength(MAX_LINKED_WALLETS + 1);
  });

  it('unlinks a linked wallet; the sign-in wallet and others’ links are not its to unlink', async () => {
    const frank = await newUser();
    const extra = new TestWallet();
    await link(frank.client, extra);
    const path = (address: string) => `/dashboard/api/live/wallets/${address}`;
    expect((await frank.client.call('DELETE', path(extra.address), { origin: null })).status).toBe(403);
    const gone = await frank.client.call('DELETE', path(extra.address));
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toMatchObject({ unlinked: true });
    expect(await walletsOf(frank.client)).toEqual([
      { address: frank.wallet.address, kind: 'sign-in', linkedAt: null },
    ]);
    expect((await frank.client.call('DELETE', path(extra.address))).body).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await frank.client.call('DELETE', path(frank.wallet.address))).status).toBe(404);
    // Alice's link is not Frank's.
    const [alicesLink] = (await walletsOf(alice)).filter((w) => w.kind === 'linked');
    expect((await frank.client.call('DELETE', path(alicesLink?.address as string))).status).toBe(404);
    // Once unlinked, another account may link it.
    expect((await link(alice, extra)).body).toMatchObject({ linked: true });
  });
});

describe('refusals', () => {
  it('a sign-in input does not link, a link input does not sign in, and one account’s input does not link for another', async () => {
    const wallet = new TestWallet();
    expectRejected(await postLink(alice, signedBy(wallet, await alice.challenge())), 'nonce_unknown');
    const linkInput = await linkChallenge(alice, wallet.address);
    const signIn = await alice.call('POST', '/dashboard/api/auth/verify', {
      body: signedBy(wallet, linkInput),
      cookie: null,
    });
    expectRejected(signIn, 'nonce_unknown');
    const bob = await newUser();
    expectRejected(await postLink(bob.client, signedBy(wallet, linkInput)), 'nonce_unknown');
    // None of these spent the nonce: the right account still links with it.
    expect((await postLink(alice, signedBy(wallet, linkInput))).body).toMatchObject({ linked: true });
  });

  it('the checks of sign-in: signature, message, expiry, domain', async () => {
    const wallet = new TestWallet();
    const input = await linkChallenge(alice, wallet.address);
    const text = new TextEncoder().encode(textOf(input, wallet.address));
    // Signed by another key.
    const forged = verifyBody(wallet.address, {
      signedMessage: text,
      signature: new TestWallet().sign(text),
    });
    expectRejected(await postLink(alice, forged), 'signature');
    // Another wallet signing the input issued for this one.
    const other = new TestWallet();
    expectRejected(await postLink(alice, signedBy(other, input)), 'message');
    // A changed statement.
    const changed = new TextEncoder().encode(
      textOf({ ...input, statement: 'Sign in to the Sibyl dashboard.' }, wallet.address),
    );
    expectRejected(
      await postLink(
        alice,
        verifyBody(wallet.address, { signedMessage: changed, signature: wallet.sign(changed) }),
      ),
      'message',
    );
    // Another domain.
    const elsewhere = new TextEncoder().encode(textOf({ ...input, domain: 'evil.example' }, wallet.address));
    expectRejected(
      await postLink(
        alice,
        verifyBody(wallet.address, { signedMessage: elsewhere, signature: wallet.sign(elsewhere) }),
      ),
      'domain',
    );
    // Too late.
    ctx.clock.advance(CHALLENGE_TTL_MS + 1);
    try {
      expectRejected(await postLink(alice, signedBy(wallet, input)), 'expired');
    } finally {
      ctx.clock.advance(-(CHALLENGE_TTL_MS + 1));
    }
    expect(await walletsOf(alice)).not.toContainEqual(expect.objectContaining({ address: wallet.address }));
  });

  it('malformed bodies are 400; the sandbox links no wallet; no session, no Origin: refused', async () => {
    const bad = await alice.call('POST', '/dashboard/api/live/wallets/challenge', {
      body: { address: 'not-base58!' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    const noOutput = await postLink(alice, { output: { account: { address: new TestWallet().address } } });
    expect(noOutput.status).toBe(400);
    expect(noOutput.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    const notBase64 = await postLink(alice, {
      output: { account: { address: new TestWallet().address }, signedMessage: '!!!!', signature: 'x' },
    });
    expect(notBase64.status).toBe(400);

    const sandbox = await alice.call('POST', '/dashboard/api/sandbox/wallets/challenge', {
      body: { address: new TestWallet().address },
    });
    expect(sandbox.status).toBe(400);
    expect(sandbox.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'path.mode', allowed: ['live'] }] },
    });
    expect((await alice.call('GET', '/dashboard/api/sandbox/wallets')).body).toMatchObject({ wallets: [] });

    const address = new TestWallet().address;
    const foreign = await alice.call('POST', '/dashboard/api/live/wallets/challenge', {
      body: { address },
      origin: 'https://evil.example',
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
    const anonymous = await alice.call('POST', '/dashboard/api/live/wallets/challenge', {
      body: { address },
      cookie: null,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 'SESSION_EXPIRED' });
    expect((await alice.call('GET', '/dashboard/api/live/wallets', { cookie: null })).status).toBe(401);
    // An API key never authenticates a dashboard endpoint.
    const { key } = await ctx.addKey(aliceLive);
    const byKey = await alice.call('GET', '/dashboard/api/live/wallets', {
      cookie: null,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(byKey.status).toBe(401);
  });
});
