import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { baseUrl } from '../http/openapi.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import { loadDemoMarkets } from '../markets/index.js';
import type { SecretBox } from '../webhooks/index.js';
import { createSandboxStarter, SANDBOX_WELCOME_MICROS } from './sandbox.js';

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
  const [row] = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM accounts) AS any');
  return row?.any !== true;
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
export function sandboxWelcomeLines(config: Config, welcome: Welcome): string[] {
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
