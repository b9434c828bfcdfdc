/**
 * Accounts (the sandbox starter account, the operator's `sibyl accounts`) and the wallet claims (a
 * wallet belongs to one account: its sign-in wallets and links, docs/deposits.md#which-wallets-count):
 * the room's door.
 */

export {
  type Account,
  type AccountMode,
  type AccountStatus,
  findAccount,
  getAccount,
  listAccounts,
  MAX_ACTIVE_KEYS,
} from './accounts.js';
export { addPlayMoney, createSandboxAccount, SANDBOX_WELCOME_MICROS } from './sandbox.js';
export { accountFields, presentAccount } from './schemas.js';
export { signInWallet, type WalletAccounts, walletAccounts } from './sign-in-wallet.js';
export {
  type AccountWallet,
  depositReference,
  linkedWallets,
  linkWallet,
  liveReferenceOwners,
  liveWalletOwners,
  MAX_LINKED_WALLETS,
  unlinkWallet,
} from './wallets.js';
