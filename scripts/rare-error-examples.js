// Records the error answers a client meets only when something else happens at the same moment: a
// retry racing its first request, every price venue down, a server shutting down, a database that
// does not answer, a wallet signature that does not verify, a wallet another account holds. Each is
// provoked for real (scripts/error-examples.js records the everyday ones): a receiver that holds a
// webhook, venues pointed at a local server that answers 503, the stream hub closed as a stopping
// server closes it, a database closed under a running app, Ed25519 keys generated here signing
// Sign-In With Solana messages.
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { createAccount } from '../dist/accounts/accounts.js';
import { buildApp } from '../dist/app.js';
import { createAttestations } from '../dist/attestations/index.js';
import { loadConfig } from '../dist/config.js';
import { createContext } from '../dist/context.js';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { createKey } from '../dist/keys/keys.js';
import { PERMISSIONS } from '../dist/keys/permissions.js';
import { creditDeposit } from '../dist/ledger/ledger.js';
import { encodeBase58 } from '../dist/lib/base58.js';
import { systemClock } from '../dist/lib/clock.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';

/** @typedef {import('../dist/gate/services.js').Services} Services (and its `app.services` on Fastify) */

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Solana wallet: a real Ed25519 key pair, its address the public key in base58. */
function newWallet() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // The SPKI DER of an Ed25519 key is a 12-byte header and the 32-byte key.
  const address = encodeBase58(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
  /** What `solana:signIn` answers for an input: the SIWS text for this address, signed by `signer`. */
  const signIn = (input, signer = privateKey) => {
    const signedMessage = Buffer.from(createSignInMessageText({ ...input, address }));
    return {
      output: {
        account: { address },
        signedMessage: signedMessage.toString('base64'),
        signature: sign(null, signedMessage, signer).toString('base64'),
      },
    };
  };
  return { address, privateKey, signIn };
}

/** A client of the dashboard's endpoints, as its page calls them: the dashboard's Origin, the session cookie. */
function dashboardClient(app) {
  let origin = 'http://127.0.0.1:3000';
  let cookie;
  const call = async (method, url, payload) => {
    const response = await app.inject({
      method,
      url: `/dashboard/api${url}`,
      headers: { origin, ...(cookie ? { cookie } : {}) },
      ...(payload === undefined ? {} : { payload }),
    });
    return { status: response.statusCode, body: response.json(), headers: response.headers };
  };
  return {
    call,
    async challenge(url, body = {}) {
      const answer = await call('POST', url, body);
      if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
      origin = answer.body.input.uri;
      return answer.body.input;
    },
    async signIn(wallet) {
      const input = await this.challenge('/auth/challenge');
      const answer = await call('POST', '/auth/verify', wallet.signIn(input));
      if (answer.status !== 200) throw new Error(`sign-in: ${answer.status} ${JSON.stringify(answer.body)}`);
      cookie = String(answer.headers['set-cookie']).split(';')[0];
      return answer.body;
    },
    async link(wallet) {
      const input = await this.challenge('/live/wallets/challenge', { address: wallet.address });
      return call('POST', '/live/wallets', wallet.signIn(input));
    },
  };
}

/** The dashboard's refusals: a signature that does not verify, a wallet held by another account, a 21st wallet. */
async function recordWalletErrors(app, record) {
  const alice = dashboardClient(app);
  await alice.signIn(newWallet());
  const stranger = newWallet();
  const bobWallet = newWallet();
  const bob = dashboardClient(app);
  const input = await bob.challenge('/auth/challenge');
  // Bob's message, signed by another key: the signature does not verify.
  await record('SIGN_IN_REJECTED', 'SIGN_IN_REJECTED', () =>
    bob.call('POST', '/auth/verify', bobWallet.signIn(input, stranger.privateKey)),
  );
  await bob.signIn(bobWallet);

  const linked = newWallet();
  const first = await alice.link(linked);
  if (first.status !== 200) throw new Error(`link: ${first.status} ${JSON.stringify(first.body)}`);
  // A wallet Alice linked signs in for accounts of its own, and Bob links it.
  const fresh = dashboardClient(app);
  const freshInput = await fresh.challenge('/auth/challenge');
  await record('dashboardSignInVerify:WALLET_IN_USE', 'WALLET_IN_USE', () =>
    fresh.call('POST', '/auth/verify', linked.signIn(freshInput)),
  );
  await record('WALLET_IN_USE', 'WALLET_IN_USE', () => bob.link(linked));
  for (let i = 1; i < 20; i++) {
    const answer = await alice.link(newWallet());
    if (answer.status !== 200)
      throw new Error(`link ${i + 1}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  await record('MAX_WALLETS_EXCEEDED', 'MAX_WALLETS_EXCEEDED', () => alice.link(newWallet()));
}

/** A retry of POST /webhooks/test while its first request still waits on a slow receiver. */
async function recordKeyInUse(app, key, { db, hold }, record) {
  const slowUrl = 'https://hooks.example.com/slow';
  const release = hold(slowUrl);
  const request = {
    method: 'POST',
    url: '/api/v1/webhooks/test',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'test-hook-4417' },
    payload: { callbackUrl: slowUrl },
  };
  const first = app.inject(request);
  for (;;) {
    const [row] = await db.query(
      "SELECT status FROM idempotency_keys WHERE idempotency_key = 'test-hook-4417'",
    );
    if (row?.status === 'running') break;
    await sleep(5);
  }
  await record('IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_IN_USE', () => app.inject(request));
  release();
  const done = await first;
  if (done.statusCode !== 200) throw new Error(`the first test webhook: ${done.statusCode} ${done.body}`);
}

/**
 * A stream's list in its query past the request-line limit, as EventSource sends it (no body to put it
 * in): Node's parser refuses it before any route, and the answer is written to the socket
 * (src/http/edge.ts), so it is recorded over the network, not with `inject`.
 */
async function recordHeadersTooLarge(app, key, record) {
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const symbols = Array.from({ length: 2000 }, (_, i) => `TOKEN${i}`).join(',');
  await record('HEADERS_TOO_LARGE', 'HEADERS_TOO_LARGE', async () => {
    const response = await fetch(`${base}/api/v1/stream/prices?symbols=${symbols}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: await response.json() };
  });
}

/**
 * A second instance, on its own database: the dashboard's refusals (its sign-in limit out of the
 * way); then a live account while every price venue fails (each answers 503 from a local server):
 * the price routes' 503; then the instance stops as `sibyl start` stops it — its streams refused —
 * and its database stops answering — /readyz 503.
 */
async function recordOnSecondInstance(record) {
  const venues = createServer((_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"maintenance"}');
  });
  await new Promise((resolve) => venues.listen(0, '127.0.0.1', () => resolve(undefined)));
  const down = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (venues.address()).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-outage-'));
  const { db } = await PgliteDatabase.open(join(dir, 'data'));
  let app;
  try {
    await migrate(db);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      SIGN_IN_LIMIT_BURST: '1000',
      ...Object.fromEntries(
        ['BINANCE', 'COINBASE', 'KRAKEN', 'OKX', 'COINGECKO', 'JUPITER', 'DEXSCREENER', 'PYTH'].map(
          (venue) => [`${venue}_BASE_URL`, down],
        ),
      ),
    });
    // Attestations off, as on PostgreSQL without ATTESTATION_SECRET_KEY: a database with no key file.
    const noKeyFile = Object.create(db, { dataDir: { value: undefined } });
    const attestations = createAttestations(noKeyFile, { secretKey: undefined, syncMs: 1000 }, systemClock);
    app = await buildApp({ config, db, clock: systemClock, secrets: clearSecretBox, attestations });
    await app.ready();
    await recordWalletErrors(app, record);
    const ctx = createContext(db, systemClock);
    const live = await createAccount(ctx, { mode: 'live' }, clearSecretBox);
    await creditDeposit(ctx, {
      accountId: live.id,
      amountMicros: 25_000_000n,
      reference: 'example-deposit-1',
    });
    const { key } = await createKey(ctx, {
      actor: { accountId: live.id, permissions: PERMISSIONS, expiresAt: null },
      settings: { name: 'example', permissions: [...PERMISSIONS] },
    });
    const api = (method, url, payload) => () =>
      app.inject({
        method,
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${key}` },
        ...(payload === undefined ? {} : { payload }),
      });
    await record('PRICE_UNAVAILABLE', 'PRICE_UNAVAILABLE', api('GET', '/price/SOL'));
    await record('ATTESTATION_UNAVAILABLE', 'ATTESTATION_UNAVAILABLE', api('GET', '/price/SOL?attest=true'));
    await record(
      'getPriceBatch:PRICE_UNAVAILABLE',
      'PRICE_UNAVAILABLE',
      api('POST', '/price/batch', { symbols: ['SOL', 'JUP'] }),
    );
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const from = new Date(hour - 3 * 3_600_000).toISOString();
    const to = new Date(hour).toISOString();
    await record(
      'getHistoricalPrice:PRICE_UNAVAILABLE',
      'PRICE_UNAVAILABLE',
      api('GET', `/historical/price/SOL?startTime=${from}&endTime=${to}&interval=1h`),
    );
    await recordHeadersTooLarge(app, key, record);
    // What a stopping server does first (src/server.ts): its streams end, new ones are refused.
    await app.services.streams.close();
    await record('SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', api('GET', '/webhooks/stream'));
    await db.close();
    await record('readyz:503', null, () => app.inject({ method: 'GET', url: '/readyz' }));
  } finally {
    await app?.close().catch(() => {});
    await db.close().catch(() => {});
    venues.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Records each answer into `found` under its label: an error by its code (or `operationId:CODE`), a
 * body that is not an error (`code` null) by `operationId:status`.
 */
export async function recordRareErrors(app, key, deps) {
  const found = {};
  const record = async (label, expectedCode, send) => {
    const response = await send();
    const status = response.statusCode ?? response.status;
    const body =
      response.body !== undefined && typeof response.body !== 'string' ? response.body : response.json();
    const expected = expectedCode === null ? `${label.split(':')[1]}` : expectedCode;
    const got = expectedCode === null ? String(status) : body.code;
    if (got !== expected)
      throw new Error(`${label}: expected ${expected}, got ${status} ${JSON.stringify(body)}`);
    found[label] = body;
  };
  await recordKeyInUse(app, key, deps, record);
  await recordOnSecondInstance(record);
  return found;
}
