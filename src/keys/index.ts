/** API keys (format, verification and its cache, restrictions, management verbs): the room's door. */
import type { Feature } from '../feature.js';
import { keysCommand } from './cli.js';
import { authCacheSettings } from './config.js';

export {
  Authenticator,
  type KeyVerification,
  keyInUrlError,
  type Principal,
  requirePermission,
} from './authenticate.js';
export { credentialInUrl, redactKeys } from './format.js';
export {
  accountOwner,
  createKey,
  type IssuedKey,
  listKeys,
  MAX_ACTIVE_KEYS,
  presentKeys,
  revokeKey,
  rotateKey,
  updateKey,
} from './keys.js';
export { serialiseOrigin } from './origins.js';
export { PERMISSIONS, type Permission } from './permissions.js';
export { checkRestrictions } from './restrictions.js';
export {
  ApiKey,
  ApiKeyWithSecret,
  CreateKeyBody,
  KeyIdParams,
  PermissionName,
  presentKey,
  UpdateKeyBody,
} from './schemas.js';
export { AUTH_CHANGES_RETENTION_MS, PRUNE_AUTH_CHANGES } from './sql.js';
export { VerificationCache } from './verification-cache.js';

export const keysFeature: Feature<{ authCache: typeof authCacheSettings }> = {
  name: 'keys',
  settings: { authCache: authCacheSettings },
  async api(app, { config, edge }) {
    const { keyRoutes } = await import('./routes.js');
    keyRoutes(app, { authenticator: edge.authenticator, access: config.access });
  },
  commands: {
    keys: {
      usage: [
        '  keys create ACCOUNT_ID [--name NAME] [--permissions a,b] [--expires-at ISO]',
        '              [--rate-limit PER_SECOND --burst N]',
        '  keys update KEY_ID [--name NAME] [--permissions a,b] [--expires-at ISO|never]',
        '              [--rate-limit PER_SECOND --burst N | --rate-limit default]',
        '  keys list ACCOUNT_ID | keys revoke KEY_ID',
      ],
      async run(io, action, args) {
        await keysCommand(await io.database(), io.out, action, args, {
          ceilings: io.config.access.ceilings,
          defaultRateLimit: io.config.access.defaultRateLimit,
        });
        return true;
      },
    },
  },
};
