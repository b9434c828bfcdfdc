/** Accounts (the sandbox starter account, the operator's `sibyl accounts`): the room's door. */

import type { Feature } from '../feature.js';
import { createSecretBox } from '../webhooks/index.js';
import { accountsCommand } from './cli.js';

export {
  type Account,
  type AccountMode,
  type AccountStatus,
  createAccount,
  findAccount,
  getAccount,
  newWebhookSecret,
} from './accounts.js';
export { addPlayMoney, SANDBOX_WELCOME_MICROS } from './sandbox.js';
export { accountFields, presentAccount } from './schemas.js';

/**
 * The sandbox starter of a first start (`sibyl start`), loaded on demand: it reaches the OpenAPI
 * document (for the docs address it prints), which an operator command does not need.
 */
export const firstStart = () => import('./first-start.js');

export const accountsFeature: Feature = {
  name: 'accounts',
  async api(app, { ports }) {
    const { accountRoutes } = await import('./routes.js');
    accountRoutes(app, { secrets: ports.secrets });
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
        await accountsCommand(await io.database(), io.out, action, args, createSecretBox(io.config.webhooks));
        return true;
      },
    },
  },
};
