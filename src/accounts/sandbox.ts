import type { Context } from '../context.js';
import { validationError } from '../errors.js';
import { creditDeposit, creditUpTo, getBalance } from '../ledger/index.js';
import { randomBase62 } from '../lib/ids.js';
import { formatUsd, MICROS_PER_USD } from '../lib/money.js';
import type { SecretBox } from '../webhooks/index.js';
import { type Account, createAccount } from './accounts.js';

export const SANDBOX_WELCOME_MICROS = 100n * MICROS_PER_USD;
/** What "add play money" credits at a time… */
export const PLAY_MONEY_MICROS = 100n * MICROS_PER_USD;
/** …up to this balance, so play money stays play-sized. */
export const PLAY_MONEY_CAP_MICROS = 1000n * MICROS_PER_USD;

/**
 * A new sandbox account with its welcome play money (100.00 USD, a deposit entry): a first start's
 * starter account and a wallet's first sign-in alike.
 */
export async function createSandboxAccount(ctx: Context, secrets: SecretBox): Promise<Account> {
  const account = await createAccount(ctx, { mode: 'sandbox' }, secrets);
  await creditDeposit(ctx, {
    accountId: account.id,
    amountMicros: SANDBOX_WELCOME_MICROS,
    reference: `sandbox-welcome:${account.id}`,
    memo: 'Sandbox play money',
  });
  return account;
}

/**
 * "Add play money" (the dashboard's sandbox button): 100.00 USD, or what brings the balance to
 * 1,000.00, as a deposit entry with a reference of its own. Sandbox accounts only.
 */
export async function addPlayMoney(ctx: Context, account: Pick<Account, 'id' | 'mode'>) {
  if (account.mode !== 'sandbox') {
    throw validationError([{ path: 'mode', message: 'play money is for sandbox accounts only' }]);
  }
  const credited = await creditUpTo(ctx, {
    accountId: account.id,
    amountMicros: PLAY_MONEY_MICROS,
    capMicros: PLAY_MONEY_CAP_MICROS,
    reference: `play-money:${account.id}:${randomBase62(16)}`,
    memo: 'Sandbox play money',
  });
  return {
    creditedUsd: formatUsd(credited?.amountMicros ?? 0n),
    balanceUsd: formatUsd(credited ? credited.balanceMicros : await getBalance(ctx, account.id)),
    capUsd: formatUsd(PLAY_MONEY_CAP_MICROS),
  };
}
