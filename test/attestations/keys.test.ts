import { createHash } from 'node:crypto';
import { statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAttestations } from '../../src/attestations/attestor.js';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import {
  decodeHeader,
  encodePrice,
  encodeResolution,
  PRICE_MESSAGE_BYTES,
  RESOLUTION_MESSAGE_BYTES,
  toFixedPoint,
} from '../../src/attestations/layout.js';
import { KEY_FILE, listKeys, rotateKeys } from '../../src/attestations/registry.js';
import type { Database } from '../../src/db/database.js';
import { decodeBase58, encodeBase58 } from '../../src/lib/base58.js';
import { ManualClock } from '../../src/lib/clock.js';
import { registry } from '../../src/metrics/metrics.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { verifies } from './helpers.js';

const PRICE = {
  mode: 'live' as const,
  requestId: 'req_abc',
  timeMs: 1_764_300_000_123,
  symbolOrMint: 'SOL',
  price: 187.4321,
  sources: 3,
  valid: true,
};

describe('the message layout', () => {
  it('is 94 bytes for a price (version 1) and 150 for a resolution (version 2), little-endian', () => {
    const price = encodePrice(PRICE);
    expect(price.length).toBe(PRICE_MESSAGE_BYTES);
    expect(Buffer.from(price.subarray(0, 8)).toString('hex')).toBe(
      `${Buffer.from('SIBYL').toString('hex')}010100`,
    );
    const view = new DataView(price.buffer);
    expect(view.getBigInt64(40, true)).toBe(1_764_300_000_123n);
    expect(view.getBigInt64(80, true)).toBe(1_874_321n);
    expect(view.getInt32(88, true)).toBe(-4);
    expect([price[92], price[93]]).toEqual([3, 1]);
    const resolution = encodeResolution({
      mode: 'sandbox',
      requestId: 'req_x',
      timeMs: 1,
      question: 'Q?',
      outcomes: ['Yes', 'No'],
      context: null,
      marketId: null,
      winningIndex: null,
      confidence: 0.8765,
      agreeing: 3,
      models: 4,
      canDetermine: false,
      evidence: [[], [{ kind: 'web', url: 'https://example.com/a', title: 't', quote: null }], [], []],
    });
    expect(resolution.length).toBe(RESOLUTION_MESSAGE_BYTES);
    expect(RESOLUTION_MESSAGE_BYTES).toBe(150);
    const r = new DataView(resolution.buffer);
    expect(decodeHeader(resolution)).toMatchObject({ version: 2, kind: 2, mode: 'sandbox', timeMs: 1 });
    // The digest of the votes' evidence, keys sorted: appended at 118.
    const evidence = '[[],[{"kind":"web","quote":null,"title":"t","url":"https://example.com/a"}],[],[]]';
    expect(Buffer.from(resolution.subarray(118, 150))).toEqual(
      createHash('sha256').update(evidence).digest(),
    );
    expect(Buffer.from(resolution.subarray(80, 112)).equals(Buffer.alloc(32))).toBe(true);
    expect([
      resolution[112],
      r.getUint16(113, true),
      resolution[115],
      resolution[116],
      resolution[117],
    ]).toEqual([255, 8765, 3, 4, 0]);
  });

  it('states a price exactly as mantissa and power of ten', () => {
    expect(toFixedPoint(0.00001234)).toEqual({ price: 1234n, exponent: -8 });
    expect(toFixedPoint(1.5e-7)).toEqual({ price: 15n, exponent: -8 });
    expect(toFixedPoint(100)).toEqual({ price: 1n, exponent: 2 });
    expect(toFixedPoint(0)).toEqual({ price: 0n, exponent: 0 });
    expect(toFixedPoint(95123.45)).toEqual({ price: 9_512_345n, exponent: -2 });
  });

  it('names a mint by its own 32 bytes', () => {
    const mint = 'So11111111111111111111111111111111111111112';
    const bytes = encodePrice({ ...PRICE, symbolOrMint: mint });
    expect(Buffer.from(bytes.subarray(48, 80)).equals(Buffer.from(decodeBase58(mint) ?? []))).toBe(true);
  });
});

describe.runIf(!usingPostgres)('keys on the embedded database', () => {
  let database: TestDatabase;
  const clock = new ManualClock('2026-11-28T05:00:00Z');

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it('generates one at first start, kept in a 0600 file, the same after a restart; refuses a missing file', async () => {
    const config = { secretKey: undefined, syncMs: 1000 };
    const first = createAttestations(database.db, config, clock);
    const keys = await first.publicKeys();
    expect(keys?.live).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(keys?.sandbox).not.toBe(keys?.live);
    await first.close();
    const path = join(database.location, KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = createAttestations(database.db, config, clock);
    expect(await again.publicKeys()).toEqual(keys);
    const signed = await again.sign({ kind: 'price', fields: PRICE });
    expect(signed && verifies(signed, keys?.live ?? '')).toBe(true);
    expect(signed && verifies(signed, keys?.sandbox ?? '')).toBe(false);
    await again.close();

    // Another key in the environment is not adopted silently.
    const other = createAttestations(database.db, { secretKey: generateSecret(), syncMs: 1000 }, clock);
    await expect(other.ready()).rejects.toThrow(/not the current key/);
    await other.close();

    unlinkSync(path);
    const lost = createAttestations(database.db, config, clock);
    await expect(lost.ready()).rejects.toThrow(/is missing, but the database lists/);
    await lost.close();

    // The operator rotates: a new key file, the old key listed as retired.
    clock.advance(60_000);
    const rotation = await rotateKeys(database.db, config, clock);
    expect(rotation.retired).toEqual(expect.arrayContaining([keys?.live, keys?.sandbox]));
    const listed = await listKeys(database.db);
    expect(listed.find((k) => k.publicKey === keys?.live)?.retiredAt).toBe('2026-11-28T05:01:00.000Z');
    // Signed before the rotation: still verifies against the retired key it names.
    expect(
      signed && listed.some((k) => k.publicKey === signed.publicKey && verifies(signed, k.publicKey)),
    ).toBe(true);
    const rotated = createAttestations(database.db, config, clock);
    expect((await rotated.publicKeys())?.live).toBe(rotation.current.live);
    await rotated.close();
  });

  it('a running instance signs with the new key after a rotation, without a restart (its notification)', async () => {
    const config = { secretKey: undefined, syncMs: 1000 };
    const running = createAttestations(database.db, config, clock);
    try {
      const before = await running.publicKeys();
      expect(before?.live).toBeDefined();
      clock.advance(60_000);
      // The rotation as `sibyl attestation rotate` makes it, through the same database.
      const rotation = await rotateKeys(database.db, config, clock);
      expect(rotation.current.live).not.toBe(before?.live);
      await vi.waitFor(async () => expect((await running.publicKeys())?.live).toBe(rotation.current.live), {
        timeout: 10_000,
        interval: 50,
      });
      const signed = await running.sign({ kind: 'price', fields: PRICE });
      expect(signed?.publicKey).toBe(rotation.current.live);
      expect(signed && verifies(signed, rotation.current.live)).toBe(true);
    } finally {
      await running.close();
    }
  });

  it('is off without a data directory or a key (as on PostgreSQL)', async () => {
    const noDir: Database = Object.create(database.db, { dataDir: { value: undefined } });
    const off = createAttestations(noDir, { secretKey: undefined, syncMs: 1000 }, clock);
    expect(await off.ready()).toBe(false);
    expect(await off.sign({ kind: 'price', fields: PRICE })).toBeNull();
    await off.close();
  });
});

describe('a keypair from the environment', () => {
  it('refuses a secret that is not a 64-byte keypair, or whose halves disagree', () => {
    expect(() => keyPairFromSecret('abc', 'ATTESTATION_SECRET_KEY')).toThrow(/base58 64-byte/);
    const good = decodeBase58(generateSecret()) ?? new Uint8Array();
    const bad = Buffer.from(good);
    bad[40] = (bad[40] ?? 0) ^ 1;
    expect(() => keyPairFromSecret(encodeBase58(bad), 'ATTESTATION_SECRET_KEY')).toThrow(
      /not the public key/,
    );
  });
});

describe('GET /api/v1/attestation/keys', () => {
  let ctx: TestContext;
  const secret = generateSecret();

  beforeAll(async () => {
    ctx = await createTestContext({ config: { ATTESTATION_SECRET_KEY: secret } });
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('lists the current keys, with no API key, free; never the secret', async () => {
    const res = await ctx.request(null, { method: 'GET', url: '/api/v1/attestation/keys' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const pair = keyPairFromSecret(secret, 'test');
    expect(body).toMatchObject({ enabled: true, version: 2, live: pair.live.publicKeyBase58 });
    expect(body.sandbox).toBe(pair.sandbox.publicKeyBase58);
    expect(body.keys).toHaveLength(2);
    expect(body.keys[0]).toMatchObject({ retiredAt: null, compromisedAt: null });
    expect(res.body).not.toContain(secret);
  });

  it('documents every status it can answer: 200, 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE', async () => {
    const res = await ctx.request(null, { method: 'GET', url: '/api/v1/openapi.json' });
    const responses = res.json().paths['/api/v1/attestation/keys'].get.responses as Record<
      string,
      { content: { 'application/json': { schema: { properties?: { code?: { enum: string[] } } } } } }
    >;
    expect(Object.keys(responses).sort()).toEqual(['200', '500', '503']);
    const codes = (status: string) =>
      responses[status]?.content['application/json'].schema.properties?.code?.enum;
    expect(codes('500')).toEqual(['INTERNAL_ERROR']);
    expect(codes('503')).toEqual(['SERVICE_UNAVAILABLE']);
  });

  it('signs without the secret reaching an answer or a metric, in any encoding', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const res = await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL?attest=true' });
    expect(res.statusCode).toBe(200);
    expect(res.json().attestation.publicKey).toBe(keyPairFromSecret(secret, 'test').sandbox.publicKeyBase58);
    const bytes = decodeBase58(secret);
    expect(bytes?.length).toBe(64);
    const seed = Buffer.from(bytes?.subarray(0, 32) ?? []);
    const forms = [secret, seed.toString('hex'), seed.toString('base64'), encodeBase58(seed)];
    const metrics = await registry.metrics();
    expect(metrics).toContain('sibyl_');
    for (const form of forms) {
      expect(res.body).not.toContain(form);
      expect(metrics).not.toContain(form);
    }
  });
});
