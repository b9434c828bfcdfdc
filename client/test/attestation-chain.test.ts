import { getBase58Encoder, type Instruction } from '@solana/kit';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Attestation,
  decodeAttestation,
  ED25519_OFFSETS,
  ED25519_PROGRAM_ADDRESS,
  ed25519Instruction,
  hashRequestId,
} from '../src/index.js';
import { attest, encodePrice, encodeResolution, newSigner } from './attestation-fixtures.js';
import { type Chain, INVALID_SIGNATURE, newChain } from './litesvm.js';
import { officialOutcome } from './program-recipe.js';

// On chain, for real: LiteSVM runs the native Ed25519 program over the instruction the client builds.
const live = newSigner();
const sandbox = newSigner();
const stranger = newSigner();
const price = {
  requestId: 'req_chain_price',
  madeAt: Date.UTC(2026, 10, 28, 5, 30),
  symbol: 'SOL',
  price: 14_212n,
  exponent: -2,
  sources: 4,
  valid: true,
};
const resolution = {
  requestId: 'req_chain_ai',
  madeAt: Date.UTC(2026, 10, 28, 5, 31),
  question: 'Will it rain in Lisbon on 2026-12-01?',
  outcomes: ['Yes', 'No'],
  outcomeIndex: 0,
  confidence: 9_100,
  agreeing: 3,
  models: 3,
  canDetermine: true,
  evidence: [[{ kind: 'web', url: 'https://example.com/rain', title: 'Rain', quote: null }], [], [], []],
};
/** A market's official resolution (kind 3): request id and market id both the market's id. */
const official = { ...resolution, kind: 3 as const, requestId: 'mkt_rain', marketId: 'mkt_rain' };
/** The same question asked by someone with `POST /ai/resolve { marketId }`: kind 2, its own request id. */
const asked = { ...resolution, requestId: 'req_shopped', marketId: 'mkt_rain', outcomeIndex: 1 };

let chain: Chain;

beforeAll(async () => {
  chain = await newChain();
});
const send = (instructions: Instruction[]) => chain.send(instructions);

const tamper = (attestation: Attestation, byte: number): Attestation => {
  const message = Buffer.from(attestation.message, 'base64');
  message[byte] = (message[byte] ?? 0) ^ 1;
  return { ...attestation, message: message.toString('base64') };
};

describe('ed25519Instruction on LiteSVM', () => {
  const signedPrice = attest(encodePrice(price), live);
  const signedResolution = attest(encodeResolution(resolution), live);
  const signedV1 = attest(encodeResolution({ ...resolution, version: 1 }), live);
  const signedOfficial = attest(encodeResolution(official), live);

  it('is processed when the signature is Sibyl’s over the message', async () => {
    expect(await send([ed25519Instruction(signedPrice)])).toBe('ok');
    expect(await send([ed25519Instruction(signedResolution)])).toBe('ok');
    expect(await send([ed25519Instruction(signedV1)])).toBe('ok');
    expect(await send([ed25519Instruction(signedOfficial)])).toBe('ok');
    expect(await send([ed25519Instruction(signedPrice), ed25519Instruction(signedResolution)])).toBe('ok');
  });

  it('fails the transaction when any byte of the message was changed', async () => {
    // the mode (sandbox → live), the request id hash, the time, the price, the outcome, confidence
    for (const [attestation, byte] of [
      [signedPrice, 7],
      [signedPrice, 8],
      [signedPrice, 40],
      [signedPrice, 80],
      [signedResolution, 112],
      [signedResolution, 113],
      // version 2: the kind, and the evidence digest's first and last bytes
      [signedOfficial, 6],
      [signedOfficial, 118],
      [signedOfficial, 149],
    ] as const) {
      expect(await send([ed25519Instruction(tamper(attestation, byte))])).toMatch(INVALID_SIGNATURE);
    }
  });

  it('fails the transaction with another key’s signature under Sibyl’s key', async () => {
    const byStranger = attest(encodePrice(price), stranger);
    expect(await send([ed25519Instruction(byStranger)])).toBe('ok');
    const presented = { ...byStranger, publicKey: live.publicKey };
    expect(await send([ed25519Instruction(presented)])).toMatch(INVALID_SIGNATURE);
  });

  it('fails a sandbox attestation presented as live: its signature is not the live key’s', async () => {
    const sandboxed = attest(encodePrice({ ...price, mode: 'sandbox' }), sandbox);
    expect(await send([ed25519Instruction(sandboxed)])).toBe('ok');
    // Claimed as signed by the live key, or with its mode byte set to live: both fail.
    expect(await send([ed25519Instruction({ ...sandboxed, publicKey: live.publicKey })])).toMatch(
      INVALID_SIGNATURE,
    );
    expect(await send([ed25519Instruction(tamper(sandboxed, 7))])).toMatch(INVALID_SIGNATURE);
    // A processed sandbox one is refused by the program's own check (below): not the live key.
    await expect(programAccepts(ed25519Instruction(sandboxed).data, price.requestId)).resolves.toBe(false);
  });

  it('lays out the data as the Ed25519 program reads it', () => {
    const { programAddress, accounts, data } = ed25519Instruction(signedPrice);
    expect(programAddress).toBe('Ed25519SigVerify111111111111111111111111111');
    expect(ED25519_PROGRAM_ADDRESS).toBe(programAddress);
    expect(accounts).toEqual([]);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    expect([0, 1].map((o) => view.getUint8(o))).toEqual([1, 0]);
    expect([2, 4, 6, 8, 10, 12, 14].map((o) => view.getUint16(o, true))).toEqual([
      48, 0xffff, 16, 0xffff, 112, 94, 0xffff,
    ]);
    expect(data.length).toBe(112 + 94);
    expect(Buffer.from(data.subarray(ED25519_OFFSETS.publicKey, 48))).toEqual(Buffer.from(live.raw));
  });
});

describe('what a market program checks', () => {
  it('accepts the live key’s attestation of the request it expects, and nothing else', async () => {
    const data = ed25519Instruction(attest(encodePrice(price), live)).data;
    await expect(programAccepts(data, price.requestId)).resolves.toBe(true);
    await expect(programAccepts(data, 'req_other')).resolves.toBe(false);
  });

  it('settles a market on its official resolution only (kind 3), never on a resolution someone asked for', async () => {
    const instruction = ed25519Instruction(signedOfficialFor(official));
    expect(instruction.data.length).toBe(112 + 150);
    expect(await send([instruction])).toBe('ok');
    await expect(
      officialOutcome(instruction.data, { marketId: 'mkt_rain', publicKey: live.publicKey }),
    ).resolves.toBe(0);
    await expect(
      officialOutcome(instruction.data, { marketId: 'mkt_other', publicKey: live.publicKey }),
    ).resolves.toBeNull();
    // The same market asked again by anyone: processed by the Ed25519 program (it is genuine), refused
    // by the program's recipe (kind 2, and its request id is not the market's).
    const shopped = ed25519Instruction(signedOfficialFor(asked));
    expect(await send([shopped])).toBe('ok');
    await expect(
      officialOutcome(shopped.data, { marketId: 'mkt_rain', publicKey: live.publicKey }),
    ).resolves.toBeNull();
    // Nor a kind 2 made to look official by its request id: the kind byte is what counts.
    const lookalike = ed25519Instruction(signedOfficialFor({ ...asked, requestId: 'mkt_rain' }));
    await expect(
      officialOutcome(lookalike.data, { marketId: 'mkt_rain', publicKey: live.publicKey }),
    ).resolves.toBeNull();
    // A sandbox official resolution: not the live key.
    const sandboxed = ed25519Instruction(attest(encodeResolution({ ...official, mode: 'sandbox' }), sandbox));
    expect(await send([sandboxed])).toBe('ok');
    await expect(
      officialOutcome(sandboxed.data, { marketId: 'mkt_rain', publicKey: live.publicKey }),
    ).resolves.toBeNull();
  });
});

function signedOfficialFor(input: Parameters<typeof encodeResolution>[0]): Attestation {
  return attest(encodeResolution(input), live);
}

/**
 * What a program does with the Ed25519 instruction it finds before its own through the
 * instructions sysvar, here in TypeScript over the same bytes: every offset points into that
 * instruction (0xFFFF), the public key is Sibyl's live key, the message is a version-1 live price
 * for the request it expects. (The signature itself the runtime has already checked.)
 */
async function programAccepts(data: Uint8Array, expectedRequestId: string): Promise<boolean> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== 1) return false;
  for (const offset of [4, 8, 14]) if (view.getUint16(offset, true) !== 0xffff) return false;
  const key = data.subarray(view.getUint16(6, true), view.getUint16(6, true) + 32);
  const liveKey = new Uint8Array(getBase58Encoder().encode(live.publicKey));
  if (!key.every((byte, i) => byte === liveKey[i])) return false;
  const start = view.getUint16(10, true);
  const fields = decodeAttestation(data.subarray(start, start + view.getUint16(12, true)));
  return (
    fields.kind === 'price' &&
    fields.mode === 'live' &&
    fields.requestIdHash === (await hashRequestId(expectedRequestId))
  );
}
