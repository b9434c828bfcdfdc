import { randomFillSync } from 'node:crypto';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import {
  encodePrice as serverEncodePrice,
  encodeResolution as serverEncodeResolution,
} from '../../src/attestations/layout.js';
import { canonicalJson } from '../src/canonical-json.js';
import { base58ToBytes, bytesToBase58 } from '../src/encoding.js';
import {
  type Attestation,
  decodeAttestation,
  evidenceHash,
  hashMarketId,
  hashQuestion,
  hashRequestId,
  hashSymbol,
  verifyAttestation,
} from '../src/index.js';
import {
  attest,
  encodePrice,
  encodeResolution,
  evidenceDigest,
  newSigner,
  sha256,
} from './attestation-fixtures.js';

// Off chain: messages encoded per the layout (docs/attestations.md), signed with node:crypto's
// Ed25519, decoded and verified by the client with WebCrypto.
const sibyl = newSigner();
const sandbox = newSigner();
const stranger = newSigner();

const price = {
  requestId: 'req_price_1',
  madeAt: Date.UTC(2026, 10, 28, 5, 0, 0, 123),
  symbol: 'SOL',
  price: 14_212_345_678n,
  exponent: -8,
  sources: 3,
  valid: true,
};
const resolution = {
  requestId: 'req_ai_1',
  madeAt: Date.UTC(2026, 10, 28, 5, 1, 2, 345),
  question: 'Will SOL close above $150 on 2026-12-01? «ünïcode»',
  outcomes: ['Yes', 'No'],
  context: 'Use the UTC daily close.',
  marketId: 'mkt_123',
  outcomeIndex: 1,
  confidence: 8_750,
  agreeing: 2,
  models: 3,
  canDetermine: true,
  evidence: [
    [
      {
        kind: 'web',
        url: 'https://example.com/sol',
        title: 'SOL «close»',
        quote: null,
        retrievedAt: '2026-12-01T00:00:00.000Z',
      },
    ],
    [],
    [
      {
        kind: 'sibyl',
        tool: 'sibyl_price',
        input: { symbol: 'SOL', at: '2026-12-01T00:00:00Z' },
        output: { vwapPrice: 151.25, sources: 3, valid: true },
      },
    ],
    [],
  ],
};

const flipBit = (base64: string, byte: number, bit: number): string => {
  const bytes = Buffer.from(base64, 'base64');
  bytes[byte] = (bytes[byte] ?? 0) ^ (1 << bit);
  return bytes.toString('base64');
};

describe('decodeAttestation', () => {
  it('gives back a price message’s fields, from base64, bytes or the attestation', async () => {
    const message = encodePrice(price);
    const fields = {
      version: 1,
      kind: 'price',
      mode: 'live',
      requestIdHash: await hashRequestId(price.requestId),
      madeAt: price.madeAt,
      symbolHash: sha256('SOL').toString('hex'),
      price: 14_212_345_678n,
      exponent: -8,
      sources: 3,
      valid: true,
    };
    expect(decodeAttestation(message)).toEqual(fields);
    expect(decodeAttestation(message.toString('base64'))).toEqual(fields);
    expect(decodeAttestation(attest(message, sibyl))).toEqual(fields);
    expect(fields.requestIdHash).toBe(sha256(price.requestId).toString('hex'));
  });

  it('gives back a resolution’s fields; 255 is no outcome and zeros no market', async () => {
    const message = encodeResolution(resolution);
    expect(decodeAttestation(message)).toEqual({
      version: 2,
      kind: 'resolution',
      mode: 'live',
      requestIdHash: await hashRequestId(resolution.requestId),
      madeAt: resolution.madeAt,
      questionHash: await hashQuestion(resolution.question, resolution.outcomes, resolution.context),
      marketIdHash: await hashMarketId('mkt_123'),
      outcomeIndex: 1,
      confidence: 8_750,
      agreeing: 2,
      models: 3,
      canDetermine: true,
      evidenceHash: evidenceDigest(resolution.evidence).toString('hex'),
    });
    const undetermined = decodeAttestation(
      encodeResolution({
        ...resolution,
        mode: 'sandbox',
        context: undefined,
        marketId: undefined,
        outcomeIndex: null,
        canDetermine: false,
      }),
    );
    expect(undetermined).toMatchObject({
      mode: 'sandbox',
      questionHash: await hashQuestion(resolution.question, resolution.outcomes),
      marketIdHash: null,
      outcomeIndex: null,
      canDetermine: false,
    });
  });

  it('reads a version 1 resolution (no evidence digest) and a market resolution (kind 3)', async () => {
    const v1 = encodeResolution({ ...resolution, version: 1 });
    expect(v1.length).toBe(118);
    expect(decodeAttestation(v1)).toMatchObject({
      version: 1,
      kind: 'resolution',
      evidenceHash: null,
      agreeing: 2,
    });
    const official = encodeResolution({ ...resolution, kind: 3, requestId: 'mkt_123' });
    expect(decodeAttestation(official)).toMatchObject({
      version: 2,
      kind: 'market-resolution',
      requestIdHash: await hashMarketId('mkt_123'),
      marketIdHash: await hashMarketId('mkt_123'),
      evidenceHash: evidenceDigest(resolution.evidence).toString('hex'),
    });
    expect(await verifyAttestation(attest(official, sibyl), [sibyl.publicKey])).toBe(true);
    expect(await verifyAttestation(attest(v1, sibyl), [sibyl.publicKey])).toBe(true);
    // Kind 3 exists only in version 2, a price only in version 1.
    expect(() => decodeAttestation(encodeResolution({ ...resolution, version: 1, kind: 3 }))).toThrow(
      'a version 1 message has no kind 3',
    );
  });

  it('evidenceHash recomputes the digest from the votes, whatever the order of their keys', async () => {
    const record = { votes: resolution.evidence.map((evidence) => ({ model: 'm', evidence })) };
    const digest = evidenceDigest(resolution.evidence).toString('hex');
    expect(await evidenceHash(record)).toBe(digest);
    const reordered = record.votes.map((vote) => ({
      evidence: vote.evidence.map((item) => Object.fromEntries(Object.entries(item as object).reverse())),
    }));
    expect(await evidenceHash({ votes: reordered })).toBe(digest);
    // Another vote order, or a changed quote: another digest.
    expect(await evidenceHash({ votes: [...record.votes].reverse() })).not.toBe(digest);
    expect(canonicalJson({ b: [1, { d: undefined, c: 'é' }], a: null })).toBe('{"a":null,"b":[1,{"c":"é"}]}');
  });

  it('reads negative prices, past times and the extremes of each width', () => {
    const fields = decodeAttestation(
      encodePrice({ ...price, price: -(2n ** 63n), exponent: -(2 ** 31), sources: 255, madeAt: -1 }),
    );
    expect(fields).toMatchObject({ price: -(2n ** 63n), exponent: -(2 ** 31), sources: 255, madeAt: -1 });
  });

  it('refuses what is not a Sibyl message of a known version, saying why', () => {
    const message = encodePrice(price);
    const changed = (offset: number, value: number) => {
      const copy = Buffer.from(message);
      copy[offset] = value;
      return copy;
    };
    expect(() => decodeAttestation(message.subarray(0, 93))).toThrow(
      'a version 1 price message has 94 bytes, not 93',
    );
    expect(() => decodeAttestation(Buffer.concat([message, Buffer.alloc(1)]))).toThrow('not 95');
    expect(() => decodeAttestation(message.subarray(0, 10))).toThrow('too short');
    expect(() => decodeAttestation(changed(0, 0x73))).toThrow('does not start with "SIBYL"');
    expect(() => decodeAttestation(changed(5, 3))).toThrow('version 3 is not known');
    expect(() => decodeAttestation(changed(5, 2))).toThrow('a version 2 message has no kind 1 (price)');
    expect(() => decodeAttestation(changed(6, 4))).toThrow('unknown kind 4');
    expect(() => decodeAttestation(changed(7, 2))).toThrow('unknown mode 2');
    expect(() => decodeAttestation(changed(93, 2))).toThrow('byte 93 is 2');
    expect(() => decodeAttestation(changed(6, 2))).toThrow(
      'a version 1 resolution message has 118 bytes, not 94',
    );
    expect(() => decodeAttestation('not base64!')).toThrow('not base64');
  });
});

describe('verifyAttestation', () => {
  const signed = {
    price: attest(encodePrice(price), sibyl),
    resolution: attest(encodeResolution(resolution), sibyl),
  };

  it('accepts a message signed by a listed key, of either kind', async () => {
    for (const attestation of Object.values(signed)) {
      expect(await verifyAttestation(attestation, [sibyl.publicKey])).toBe(true);
      expect(await verifyAttestation(attestation, sibyl.publicKey)).toBe(true);
      expect(await verifyAttestation(attestation, [stranger.publicKey, sibyl.publicKey])).toBe(true);
      expect(await verifyAttestation(attestation, [sibyl.publicKey], { mode: 'live' })).toBe(true);
    }
  });

  it('refuses a flipped bit anywhere in the message, the signature or the key', async () => {
    for (const attestation of Object.values(signed)) {
      const size = Buffer.from(attestation.message, 'base64').length;
      const tampered: Attestation[] = [];
      for (let byte = 0; byte < size; byte += 1) {
        for (const bit of [0, 7])
          tampered.push({ ...attestation, message: flipBit(attestation.message, byte, bit) });
      }
      for (let byte = 0; byte < 64; byte += 1) {
        tampered.push({ ...attestation, signature: flipBit(attestation.signature, byte, byte % 8) });
      }
      const results = await Promise.all(tampered.map((t) => verifyAttestation(t, [sibyl.publicKey])));
      expect(results.filter(Boolean)).toEqual([]);
      expect(results).toHaveLength(size * 2 + 64);
      // The key itself changed (and listed, so only the signature check can refuse it).
      const otherKey = { ...attestation, publicKey: stranger.publicKey };
      expect(await verifyAttestation(otherKey, [sibyl.publicKey, stranger.publicKey])).toBe(false);
    }
  });

  it('refuses a key that is not listed, even when the signature is its own', async () => {
    const byStranger = attest(encodePrice(price), stranger);
    expect(await verifyAttestation(byStranger, [stranger.publicKey])).toBe(true);
    expect(await verifyAttestation(byStranger, [sibyl.publicKey])).toBe(false);
    expect(await verifyAttestation(byStranger, [])).toBe(false);
  });

  it('refuses a sandbox attestation where live is required', async () => {
    const sandboxed = attest(encodeResolution({ ...resolution, mode: 'sandbox' }), sandbox);
    expect(await verifyAttestation(sandboxed, [sandbox.publicKey])).toBe(true);
    expect(await verifyAttestation(sandboxed, [sandbox.publicKey], { mode: 'live' })).toBe(false);
    expect(await verifyAttestation(sandboxed, [sandbox.publicKey], { mode: 'sandbox' })).toBe(true);
    expect(await verifyAttestation(signed.price, [sibyl.publicKey], { mode: 'sandbox' })).toBe(false);
  });

  it('refuses, without throwing, what is malformed', async () => {
    const base = signed.price;
    const cases: Attestation[] = [
      { ...base, version: 2 },
      { ...base, signature: 'AAAA' },
      { ...base, signature: '***' },
      { ...base, message: Buffer.from('SIBYL').toString('base64') },
      { ...base, publicKey: 'not-base58-0OIl' },
    ];
    for (const attestation of cases) {
      expect(await verifyAttestation(attestation, [attestation.publicKey])).toBe(false);
    }
  });
});

describe('the client’s base58', () => {
  it('agrees with @solana/kit, leading zeros included', () => {
    const kitDecoder = getBase58Decoder();
    const kitEncoder = getBase58Encoder();
    for (const length of [0, 1, 31, 32, 64]) {
      for (const zeros of [0, 1, 3]) {
        const bytes = new Uint8Array(length);
        randomFillSync(bytes);
        bytes.fill(0, 0, Math.min(zeros, length));
        const text = kitDecoder.decode(bytes);
        expect(bytesToBase58(bytes)).toBe(text);
        expect(base58ToBytes(text)).toEqual(new Uint8Array(kitEncoder.encode(text)));
      }
    }
    expect(() => base58ToBytes('0OIl')).toThrow('not base58');
  });
});

describe('the client against the service’s own encoder', () => {
  it('decodes what the service’s layout encoder writes, and hashes the same way', async () => {
    const mint = 'So11111111111111111111111111111111111111112';
    for (const symbolOrMint of ['SOL', mint]) {
      const fields = decodeAttestation(
        serverEncodePrice({
          mode: 'sandbox',
          requestId: 'req_server',
          timeMs: 1_764_306_000_123,
          symbolOrMint,
          price: 187.4321,
          sources: 5,
          valid: false,
        }),
      );
      expect(fields).toEqual({
        version: 1,
        kind: 'price',
        mode: 'sandbox',
        requestIdHash: await hashRequestId('req_server'),
        madeAt: 1_764_306_000_123,
        symbolHash: await hashSymbol(symbolOrMint),
        price: 1_874_321n,
        exponent: -4,
        sources: 5,
        valid: false,
      });
    }
    expect(await hashSymbol(mint)).toBe(Buffer.from(getBase58Encoder().encode(mint)).toString('hex'));
    expect(await hashSymbol('SOL')).toBe(sha256('SOL').toString('hex'));

    for (const [context, marketId, winningIndex] of [
      ['Per the UTC close.', 'mkt_9', 2],
      [null, null, null],
    ] as const) {
      const fields = decodeAttestation(
        serverEncodeResolution({
          mode: 'live',
          requestId: 'req_ai_server',
          timeMs: 1_764_306_001_000,
          question: 'Which "quoted" team wins — ünïcode?',
          outcomes: ['A', 'B', 'Draw'],
          context,
          marketId,
          winningIndex,
          confidence: 0.8734,
          agreeing: 2,
          models: 3,
          canDetermine: winningIndex !== null,
          evidence: resolution.evidence,
        }),
      );
      expect(fields).toEqual({
        version: 2,
        kind: 'resolution',
        mode: 'live',
        requestIdHash: await hashRequestId('req_ai_server'),
        madeAt: 1_764_306_001_000,
        questionHash: await hashQuestion('Which "quoted" team wins — ünïcode?', ['A', 'B', 'Draw'], context),
        marketIdHash: marketId === null ? null : await hashMarketId(marketId),
        outcomeIndex: winningIndex,
        confidence: 8_734,
        agreeing: 2,
        models: 3,
        canDetermine: winningIndex !== null,
        evidenceHash: await evidenceHash({ votes: resolution.evidence.map((evidence) => ({ evidence })) }),
      });
    }
  });
});

describe('verifyAttestation with the published key set', () => {
  it('takes a key for its own mode only, and a retired key only for what it signed before retiring', async () => {
    const signedAt = price.madeAt;
    const set = (retiredAt: string | null, mode: 'live' | 'sandbox' = 'live') => ({
      keys: [
        { publicKey: stranger.publicKey, mode: 'live' as const, retiredAt: null },
        { publicKey: sibyl.publicKey, mode, retiredAt },
      ],
    });
    const livePrice = attest(encodePrice(price), sibyl);
    expect(await verifyAttestation(livePrice, set(null))).toBe(true);
    expect(await verifyAttestation(livePrice, set(new Date(signedAt).toISOString()))).toBe(true);
    expect(await verifyAttestation(livePrice, set(new Date(signedAt + 60_000).toISOString()))).toBe(true);
    expect(await verifyAttestation(livePrice, set(new Date(signedAt - 1).toISOString()))).toBe(false);
    // The live key listed as sandbox does not pass a live message, nor the other way round.
    expect(await verifyAttestation(livePrice, set(null, 'sandbox'))).toBe(false);
    const sandboxPrice = attest(encodePrice({ ...price, mode: 'sandbox' }), sibyl);
    expect(await verifyAttestation(sandboxPrice, set(null, 'sandbox'))).toBe(true);
    expect(await verifyAttestation(sandboxPrice, set(null, 'live'))).toBe(false);
    expect(await verifyAttestation(livePrice, { keys: [] })).toBe(false);
  });

  it('trusts nothing a compromised key signed, whatever time its message states (a backdated forgery)', async () => {
    const retiredAt = new Date(price.madeAt + 60_000).toISOString();
    const listed = (compromisedAt: string | null) => ({
      keys: [{ publicKey: sibyl.publicKey, mode: 'live' as const, retiredAt, compromisedAt }],
    });
    // Made (or claimed made) before the retirement: a routine rotation keeps it, a compromise does not.
    const backdated = attest(encodePrice(price), sibyl);
    expect(await verifyAttestation(backdated, listed(null))).toBe(true);
    expect(await verifyAttestation(backdated, listed(retiredAt))).toBe(false);
  });
});
