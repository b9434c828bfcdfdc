/** Accounts (the sandbox starter account, the operator's `sibyl accounts`): the room's door. */

export {
  type Account,
  type AccountMode,
  type AccountStatus,
  createAccount,
  findAccount,
  getAccount,
  listAccounts,
  MAX_ACTIVE_KEYS,
  newWebhookSecret,
} from './accounts.js';
export { addPlayMoney, SANDBOX_WELCOME_MICROS } from './sandbox.js';
export { accountFields, presentAccount } from './schemas.js';
