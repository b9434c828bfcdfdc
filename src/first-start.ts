import {
  type Account,
  createSandboxAccount,
  listAccounts,
  SANDBOX_WELCOME_MICROS,
} from './accounts/index.js';
import { createContext } from './context.js';
import type { CoreConfig } from './core-settings.js';
import type { Database } from './db/database.js';
import { baseUrl } from './http/openapi.js';
import { createKey, type IssuedKey, PERMISSIONS } from './keys/index.js';
import { type Clock, systemClock } from './lib/clock.js';
import { formatUsd } from './lib/money.js';
import { loadDemoMarkets } from './markets/index.js';
import type { SecretBox } from './webhooks/index.js';

/**
 * A first start of `sibyl start` on a new embedded database (docs/operations.md#first-start): the
 * sandbox starter account with its key, and the demo markets. A composition of three rooms (accounts,
 * keys, markets), so it stands beside the other composition roots; `server.ts` loads it on demand.
 */

/** A sandbox account with play money and a full-permission key: what a first start hands out. */
export async function createSandboxStarter(
  db: Database,
  clock: Clock,
  secrets: SecretBox,
): Promise<{ account: Account; key: IssuedKey }> {
  const ctx = createContext(db, clock);
  const account = await createSandboxAccount(ctx, secrets);
  const key = await createKey(ctx, {
    actor: { accountId: account.id, permissions: PERMISSIONS, expiresAt: null },
    settings: { name: 'sandbox starter key' },
  });
  return { account, key };
}

export interface Welcome {
  accountId: string;
  key: string;
  balance: bigint;
  demoMarkets: number;
}

/**
 * Whether this start hands out the sandbox starter: an embedded database with no account yet. That
 * is a first start — and also the start after a first start that failed before the starter was
 * made (a port in use), so the key is never lost to a failed start.
 */
export async function needsStarter(db: Database): Promise<boolean> {
  if (db.kind !== 'pglite') return false;
  return (await listAccounts(createContext(db, systemClock), { limit: 1 })).length === 0;
}

/**
 * The sandbox account, its key and the demo markets. Made only once the service is listening, as
 * the last step of a start, so the key it prints is never created by a start that then fails.
 */
export async function createWelcome(db: Database, clock: Clock, secrets: SecretBox): Promise<Welcome> {
  const starter = await createSandboxStarter(db, clock, secrets);
  const demo = await loadDemoMarkets(db, clock);
  return {
    accountId: starter.account.id,
    key: starter.key.key,
    balance: SANDBOX_WELCOME_MICROS,
    demoMarkets: demo.markets,
  };
}

/** The first start's lines of the start banner (src/start-banner.ts): the starter account, its key, a try. */
export function sandboxWelcomeLines(
  config: Pick<CoreConfig, 'host' | 'port' | 'publicBaseUrl'>,
  welcome: Welcome,
): string[] {
  const { accountId, key, balance } = welcome;
  return [
    '  Sibyl is running on a new embedded database, with a sandbox account:',
    '',
    `    account   ${accountId}`,
    `    balance   ${formatUsd(balance)} USD (play money)`,
    `    API key   ${key}`,
    '',
    `  and ${welcome.demoMarkets} sandbox demo markets (GET /api/v1/markets).`,
    '',
    `  The key is shown this once (lost it? \`npm run sibyl -- keys create ${accountId}\`, Sibyl running or not).`,
    '  Try it:',
    '',
    `    curl -H "Authorization: Bearer ${key}" ${baseUrl(config)}/api/v1/account`,
    '',
  ];
}
