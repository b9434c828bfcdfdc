import type { Database } from '../db/database.js';
import type { IssuedKey } from '../keys/keys.js';
import { createKey } from '../keys/keys.js';
import { PERMISSIONS } from '../keys/permissions.js';
import { creditDeposit } from '../ledger/ledger.js';
import type { Clock } from '../lib/clock.js';
import { MICROS_PER_USD } from '../lib/money.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { type Account, createAccount } from './accounts.js';

export const SANDBOX_WELCOME_MICROS = 100n * MICROS_PER_USD;

/** A sandbox account with play money and a full-permission key: what a first start hands out. */
export async function createSandboxStarter(
  db: Database,
  clock: Clock,
  secrets: SecretBox,
): Promise<{ account: Account; key: IssuedKey }> {
  const account = await createAccount(db, clock, { mode: 'sandbox' }, secrets);
  await creditDeposit(db, {
    accountId: account.id,
    amountMicros: SANDBOX_WELCOME_MICROS,
    reference: `sandbox-welcome:${account.id}`,
    memo: 'Sandbox play money',
  });
  const key = await createKey(
    db,
    clock,
    { accountId: account.id, permissions: PERMISSIONS, expiresAt: null },
    { name: 'sandbox starter key' },
  );
  return { account, key };
}
