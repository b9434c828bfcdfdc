/**
 * API keys: what other features use of them. Stored rows and their SQL are in rows.ts, the rules a
 * key manager is held to in policy.ts, and the verbs that change keys in management.ts.
 */
export { createKey, revokeKey, rotateKey, updateKey } from './management.js';
export {
  accountOwner,
  type KeyActor,
  type KeyPolicy,
  MAX_ACTIVE_KEYS,
  OPERATOR_POLICY,
  ROTATION_GRACE_MS,
} from './policy.js';
export { presentKeys } from './present.js';
export { type ApiKeyRecord, type IssuedKey, isKeyActive, listKeys } from './rows.js';
