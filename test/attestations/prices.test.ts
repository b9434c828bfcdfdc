import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAttestations } from '../../src/attestations/attestor.js';
import { generateSecret } from '../../src/attestations/keys.js';
import type { Database } from '../../src/db/database.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import {
  expectEveryFlipFails,
  fixedPointValue,
  readPrice,
  sha256,
  type TestAttestation,
  verifies,
} from './helpers.js';

let ctx: TestContext;
let account: TestAccount;
let keys: { live: string; sandbox: string };

beforeAll(async () => {
  ctx = await createTestContext({
    config: { PRICE_VENUES: '', ATTESTATION_SECRET_KEY: generateSecret() },
  });
  ctx.clock.set('2026-11-21T12:00:05Z');
  account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
  keys = (await ctx.request(null, { method: 'GET', url: '/api/v1/attestation/keys' })).json();
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const get = (url: string) => ctx.request(account.key, { method: 'GET', url: `/api/v1${url}` });

function expectPriceAttestation(
  a: TestAttestation,
  answer: { requestId: string; symbol: string; vwapPrice: number; sourceCount: number; isValid: boolean },
  timestamp: string,
) {
  expect(a.version).toBe(1);
  expect(a.publicKey).toBe(keys.sandbox);
  expect(verifies(a, keys.sandbox)).toBe(true);
  // A sandbox attestation never passes for a live one.
  expect(verifies(a, keys.live)).toBe(false);
  const message = Buffer.from(a.message, 'base64');
  expect(message.length).toBe(94);
  const fields = readPrice(message);
  expect(fields).toMatchObject({ magic: 'SIBYL', version: 1, kind: 1, mode: 'sandbox' });
  expect(fields.requestIdHash.equals(sha256(answer.requestId))).toBe(true);
  expect(fields.timeMs).toBe(Date.parse(timestamp));
  expect(fields.asset.equals(sha256(answer.symbol))).toBe(true);
  expect(fixedPointValue(fields.price, fields.exponent)).toBe(answer.vwapPrice);
  expect(fields.sources).toBe(answer.sourceCount);
  expect(fields.valid).toBe(answer.isValid);
  expectEveryFlipFails(a, keys.sandbox);
}

describe('GET /price/:symbolOrMint?attest=true', () => {
  it('signs the price, charges 0.01 + 0.005 exactly, and decodes to the answer’s own values', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await get('/price/SOL?attest=true');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.costUsd).toBe('0.015');
    expect(before - (await balanceOf(ctx.database.db, account.accountId))).toBe(15_000n);
    expectPriceAttestation(body.attestation, body, body.resolutionTimestamp);
    expect(body.requestId).toBe(response.headers['x-request-id']);
  });

  it('without attest (or attest=false): no attestation, 0.01', async () => {
    for (const url of ['/price/SOL', '/price/SOL?attest=false']) {
      const body = (await get(url)).json();
      expect(body.costUsd).toBe('0.01');
      expect(body.attestation).toBeUndefined();
    }
  });

  it('refuses attest=maybe with a 400, charging nothing', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await get('/price/SOL?attest=maybe');
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('VALIDATION_ERROR');
    const batch = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/batch?attest=1',
      payload: { symbols: ['SOL'] },
    });
    expect(batch.statusCode).toBe(400);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });
});

describe('POST /price/batch?attest=true', () => {
  it('signs each priced symbol, charges 0.005 each more, and a replay returns the same bytes', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const send = () =>
      ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/price/batch?attest=true',
        headers: { 'idempotency-key': 'attested-batch-1' },
        payload: { symbols: ['SOL', 'So11111111111111111111111111111111111111112', 'JUP', 'NOSUCHTOKEN'] },
      });
    const first = await send();
    expect(first.statusCode).toBe(200);
    const body = first.json();
    // SOL and its mint collapse; NOSUCHTOKEN is an item with an error, not signed.
    expect(body.prices.map((p: { symbol: string }) => p.symbol)).toEqual(['SOL', 'JUP', 'NOSUCHTOKEN']);
    expect(body.prices[2].attestation).toBeUndefined();
    expect(body.costUsd).toBe('0.09'); // 0.05 + 3 × 0.01 + 2 × 0.005
    expect(before - (await balanceOf(ctx.database.db, account.accountId))).toBe(90_000n);
    for (const item of body.prices.slice(0, 2))
      expectPriceAttestation(
        item.attestation,
        { ...item, requestId: body.requestId },
        body.resolutionTimestamp,
      );
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().prices[0].attestation).toEqual(body.prices[0].attestation);
    expect(before - (await balanceOf(ctx.database.db, account.accountId))).toBe(90_000n);
  });
});

describe('where attestations are off (PostgreSQL without ATTESTATION_SECRET_KEY)', () => {
  let off: TestContext;
  let offAccount: TestAccount;

  beforeAll(async () => {
    off = await createTestContext({ config: { PRICE_VENUES: '' } });
    const noKey: Database = Object.create(off.database.db, { dataDir: { value: undefined } });
    await off.app.close();
    off = await createTestContext({
      database: off.database,
      config: { PRICE_VENUES: '' },
      app: { attestations: createAttestations(noKey, { secretKey: undefined, syncMs: 1000 }, off.clock) },
    });
    offAccount = await off.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
  });
  afterAll(async () => {
    await off.close();
    await off.database.close(); // the first context's, which the second only borrowed
  });

  it('answers 503 ATTESTATION_UNAVAILABLE to attest=true, charging nothing; the price without it works', async () => {
    const before = await balanceOf(off.database.db, offAccount.accountId);
    const single = await off.request(offAccount.key, { method: 'GET', url: '/api/v1/price/SOL?attest=true' });
    expect(single.statusCode).toBe(503);
    expect(single.json().code).toBe('ATTESTATION_UNAVAILABLE');
    const batch = await off.request(offAccount.key, {
      method: 'POST',
      url: '/api/v1/price/batch?attest=true',
      payload: { symbols: ['SOL'] },
    });
    expect(batch.json().code).toBe('ATTESTATION_UNAVAILABLE');
    expect(await balanceOf(off.database.db, offAccount.accountId)).toBe(before);
    expect((await off.request(offAccount.key, { method: 'GET', url: '/api/v1/price/SOL' })).statusCode).toBe(
      200,
    );
    const published = await off.request(null, { method: 'GET', url: '/api/v1/attestation/keys' });
    expect(published.json()).toMatchObject({ enabled: false, live: null, sandbox: null, keys: [] });
  });
});
