/** API keys (format, verification and its cache, restrictions, management verbs): the room's door. */
export {
  Authenticator,
  type KeyVerification,
  keyInUrlError,
  type Principal,
  requirePermission,
} from './authenticate.js';
export { credentialInUrl, redactKeys } from './format.js';
export { createKey, type IssuedKey } from './keys.js';
export { serialiseOrigin } from './origins.js';
export { PERMISSIONS, type Permission } from './permissions.js';
export { keyNames } from './present.js';
export { checkRestrictions } from './restrictions.js';
export { PermissionName } from './schemas.js';
export { VerificationCache } from './verification-cache.js';
