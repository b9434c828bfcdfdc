/** API keys' descriptor (src/feature.ts): the verification cache's settings, the key routes, `sibyl keys`. */
import type { Feature } from '../feature.js';
import type { AccessConfig } from '../limits/index.js';
import type { Authenticator } from './authenticate.js';
import { authCacheSettings } from './config.js';

export interface Needs {
  config: { access: AccessConfig };
  edge: { authenticator: Authenticator };
}

export const keysFeature: Feature<{ authCache: typeof authCacheSettings }, Needs> = {
  name: 'keys',
  settings: { authCache: authCacheSettings },
  async api(app, { config, edge }) {
    const { keyRoutes } = await import('./routes.js');
    keyRoutes(app, { authenticator: edge.authenticator, access: config.access });
  },
  // `key.expiring` warnings (docs/webhooks.md#event-catalog): each made once, whichever worker finds it.
  async worker({ db, clock }) {
    const { keyExpiryTask } = await import('./expiry.js');
    return { tasks: [keyExpiryTask({ db, clock })] };
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
        const { keysCommand } = await import('./cli.js');
        await keysCommand(await io.database(), io.out, action, args, {
          ceilings: io.config.access.ceilings,
          defaultRateLimit: io.config.access.defaultRateLimit,
        });
        return true;
      },
    },
  },
  // The revocation feed is read over seconds: a fixed day of it, no setting.
  async retention() {
    const { AUTH_CHANGES_RETENTION_MS, PRUNE_AUTH_CHANGES } = await import('./sql.js');
    return [{ name: 'auth_changes', prune: PRUNE_AUTH_CHANGES, keepMs: () => AUTH_CHANGES_RETENTION_MS }];
  },
};
