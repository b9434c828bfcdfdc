import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/**
 * The attestation key (docs/attestations.md#for-the-operator): a base58 64-byte Ed25519 keypair.
 * Unset: on the embedded database one is generated at first start and kept in the data directory;
 * on PostgreSQL attestations are off.
 */
export const attestationSettings = defineSettings(
  {
    ATTESTATION_SECRET_KEY: Type.Optional(
      Type.String({ minLength: 1, description: 'base58 64-byte Ed25519 keypair (seed and public key)' }),
    ),
  },
  (v) => ({
    /** Never logged, never in an answer (docs/attestations.md#keys). */
    secretKey: v.ATTESTATION_SECRET_KEY,
  }),
);

export type AttestationConfig = ReturnType<typeof attestationSettings.parse>;
