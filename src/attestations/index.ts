/**
 * Attestations (docs/attestations.md): answers signed with an Ed25519 key whose public half is
 * published, in a byte layout a Solana program verifies — the room's door.
 */
export {
  type Attestation,
  type Attestations,
  attest,
  createAttestations,
  requireAttestations,
  type SignedKind,
} from './attestor.js';
export { AttestationSchema } from './schemas.js';
