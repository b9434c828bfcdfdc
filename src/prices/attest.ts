import Type from 'typebox';
import type { AccountMode } from '../accounts/index.js';
import { type Attestation, type Attestations, attest } from '../attestations/index.js';
import { priceMessage } from './price-message.js';

/** `?attest=true`: the answer is signed (docs/attestations.md#prices); anything but true or false is a 400. */
export const AttestQuery = Type.Object(
  {
    attest: Type.Optional(
      Type.Enum(['true', 'false'], {
        description:
          'true: each priced symbol carries an Ed25519 `attestation` a Solana program can verify, +0.005 USD per ' +
          'symbol signed (docs/attestations.md#prices). 503 ATTESTATION_UNAVAILABLE where attestations are off.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One priced symbol's attestation: its request, its time, the asset, the price as answered. */
export function signPrice(
  attestations: Attestations,
  input: { requestId: string; mode: AccountMode; timeMs: number },
  priced: { symbol: string; vwapPrice: number; sourceCount: number; isValid: boolean },
): Promise<Attestation> {
  return attest(attestations, priceMessage(input, priced));
}
