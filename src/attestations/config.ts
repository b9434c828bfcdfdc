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
    ATTESTATION_KEYS_SYNC_MS: Type.Integer({ default: 1000, minimum: 100 }),
  },
  (v) => ({
    /** Never logged, never in an answer (docs/attestations.md#keys). */
    secretKey: v.ATTESTATION_SECRET_KEY,
    /** How often a process checks that its key is still the listed one (docs/attestations.md#rotation). */
    syncMs: v.ATTESTATION_KEYS_SYNC_MS,
  }),
);

export type AttestationConfig = ReturnType<typeof attestationSettings.parse>;
