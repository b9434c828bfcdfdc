import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/attestations/keys.js';
import type { TestContext } from '../../test/helpers/context.js';
import {
  type Attestation,
  createSibylClient,
  decodeAttestation,
  ed25519Instruction,
  hashRequestId,
  hashSymbol,
  type Schemas,
  type SibylClient,
  unwrap,
  verifyAttestation,
} from '../src/index.js';
import { startService } from './helpers.js';
import { type Chain, INVALID_SIGNATURE, newChain } from './litesvm.js';

// A real answer of the service, signed by it, fetched over HTTP with the client: verified off
// chain against the keys GET /attestation/keys publishes, and on chain by the Ed25519 program.
let ctx: TestContext;
let sibyl: SibylClient;
let keys: Schemas['AttestationKeys'];
let chain: Chain;

beforeAll(async () => {
  let baseUrl: string;
  ({ ctx, baseUrl } = await startService({
    config: { PRICE_VENUES: '', ATTESTATION_SECRET_KEY: generateSecret() },
  }));
  const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
  sibyl = createSibylClient({ baseUrl, apiKey: account.key });
  keys = await unwrap(sibyl.GET('/api/v1/attestation/keys'));
  chain = await newChain();
});
afterAll(async () => {
  await ctx.close();
});

const tampered = (attestation: Attestation, byte: number): Attestation => {
  const message = Buffer.from(attestation.message, 'base64');
  message[byte] = (message[byte] ?? 0) ^ 1;
  return { ...attestation, message: message.toString('base64') };
};

describe('a price asked with attest=true', () => {
  it('verifies against the published sandbox key, decodes to the answer, and passes the Ed25519 program', async () => {
    const price = await unwrap(
      sibyl.GET('/api/v1/price/{symbolOrMint}', {
        params: { path: { symbolOrMint: 'SOL' }, query: { attest: 'true' } },
      }),
    );
    const attestation = price.attestation;
    if (!attestation) throw new Error(`no attestation: ${JSON.stringify(price)}`);
    expect(keys.enabled).toBe(true);
    expect(attestation.publicKey).toBe(keys.sandbox);

    // Off chain: the published key set as it is, or the key; never as live.
    expect(await verifyAttestation(attestation, keys)).toBe(true);
    expect(await verifyAttestation(attestation, keys, { mode: 'sandbox' })).toBe(true);
    expect(await verifyAttestation(attestation, keys, { mode: 'live' })).toBe(false);
    expect(await verifyAttestation(attestation, [keys.live ?? ''])).toBe(false);
    expect(await verifyAttestation({ ...attestation, publicKey: keys.live ?? '' }, keys)).toBe(false);
    expect(await verifyAttestation(tampered(attestation, 80), keys)).toBe(false);

    // The answer's own values.
    const fields = decodeAttestation(attestation);
    if (fields.kind !== 'price') throw new Error(`a ${fields.kind} attestation`);
    expect(fields).toMatchObject({
      version: 1,
      mode: 'sandbox',
      requestIdHash: await hashRequestId(price.requestId),
      madeAt: Date.parse(price.resolutionTimestamp),
      symbolHash: await hashSymbol(price.symbol),
      sources: price.sourceCount,
      valid: price.isValid,
    });
    expect(Number(`${fields.price}e${fields.exponent}`)).toBe(price.vwapPrice);

    // On chain.
    expect(await chain.send([ed25519Instruction(attestation)])).toBe('ok');
    expect(await chain.send([ed25519Instruction(tampered(attestation, 80))])).toMatch(INVALID_SIGNATURE);
    expect(await chain.send([ed25519Instruction({ ...attestation, publicKey: keys.live ?? '' })])).toMatch(
      INVALID_SIGNATURE,
    );
  });
});
