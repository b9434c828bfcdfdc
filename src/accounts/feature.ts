/** Accounts' descriptor (src/feature.ts): its routes, its first start and `sibyl accounts`. */
import type { Feature } from '../feature.js';
import type { SecretBox, WebhookSettings } from '../webhooks/index.js';
import type { PricingSettings } from './schemas.js';

export interface Needs {
  config: { webhooks: WebhookSettings } & PricingSettings;
  ports: { secrets: SecretBox };
}

export const accountsFeature: Feature<Record<never, never>, Needs> = {
  name: 'accounts',
  tables: ['accounts', 'dashboard_wallets', 'deposit_wallets', 'wallet_owners', 'wallet_claims_dropped'],
  async api(app, { config, ports }) {
    const { accountRoutes } = await import('./routes.js');
    accountRoutes(app, { secrets: ports.secrets, settings: config });
  },
  commands: {
    accounts: {
      usage: [
        '  accounts create [--mode live|sandbox] [--wallet ADDR]',
        '  accounts list                           the newest 500 accounts',
        '  accounts show ACCOUNT_ID',
        '  accounts transactions ACCOUNT_ID [--limit N] [--kind K] [--starting-after ID]',
        '  accounts credit ACCOUNT_ID USD --reference REF [--memo TEXT]',
        '  accounts adjust ACCOUNT_ID ±USD --reason TEXT   a correction (adjustment entry; never below zero)',
        '  accounts suspend ACCOUNT_ID | accounts activate ACCOUNT_ID',
      ],
      async run(io, action, args) {
        const [{ accountsCommand }, { createSecretBox }] = await Promise.all([
          import('./cli.js'),
          import('../webhooks/index.js'),
        ]);
        await accountsCommand(await io.database(), io.out, action, args, createSecretBox(io.config.webhooks));
        return true;
      },
    },
  },
};
