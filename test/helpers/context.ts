import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { type AccountMode, createAccount } from '../../src/accounts/accounts.js';
import type { MarketSource } from '../../src/ai/market-port.js';
import { type AppOptions, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { createKey, type IssuedKey } from '../../src/keys/keys.js';
import { PERMISSIONS, type Permission } from '../../src/keys/permissions.js';
import type { Biller } from '../../src/ledger/biller.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { ManualClock, systemClock } from '../../src/lib/clock.js';
import { parseUsd } from '../../src/lib/money.js';
import type { CallbackOutbox } from '../../src/webhooks/port.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export function testConfig(overrides: Record<string, string> = {}): Config {
  // Most tests send bursts far above the default rate limit with a clock that stands still;
  // the rate-limit tests set their own.
  return loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_BURST: '1000000',
    RATE_LIMIT_MAX_BURST: '1000000',
    // The security cases fail authentication hundreds of times from one address.
    AUTH_FAILURE_LIMIT_BURST: '1000000',
    ...overrides,
  });
}

export interface TestAccount {
  accountId: string;
  key: string;
  keyId: string;
}

export interface TestContext {
  database: TestDatabase;
  app: FastifyInstance;
  clock: ManualClock;
  config: Config;
  createAccount(options?: {
    mode?: AccountMode;
    balanceUsd?: string;
    permissions?: readonly Permission[];
  }): Promise<TestAccount>;
  addKey(accountId: string, permissions?: readonly Permission[], expiresAt?: Date | null): Promise<IssuedKey>;
  request(key: string | null, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

let referenceCounter = 0;

/** A real app on a real (fresh) database, with a clock the test controls. */
export async function createTestContext(
  options: {
    config?: Record<string, string>;
    extraRoutes?: (app: FastifyInstance) => void;
    biller?: (db: TestDatabase['db']) => Biller;
    database?: TestDatabase;
    logger?: Logger;
    /** Default: the app's webhook outbox (rows of webhook_deliveries; see helpers/callbacks.ts). */
    callbacks?: CallbackOutbox;
    markets?: MarketSource;
    /** Anything else the app takes (other ports). */
    app?: Partial<AppOptions>;
  } = {},
): Promise<TestContext> {
  const database = options.database ?? (await createTestDatabase());
  const clock = new ManualClock(new Date());
  const config = testConfig(options.config);
  const app = await buildApp({
    config,
    db: database.db,
    clock,
    ...(options.callbacks ? { callbacks: options.callbacks } : {}),
    ...(options.markets ? { markets: options.markets } : {}),
    ...(options.extraRoutes ? { extraRoutes: options.extraRoutes } : {}),
    ...(options.biller ? { biller: options.biller(database.db) } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...options.app,
  });
  await app.ready();
  const db = database.db;

  const addKey: TestContext['addKey'] = (accountId, permissions = PERMISSIONS, expiresAt = null) =>
    createKey(createContext(db, clock), {
      actor: { accountId, permissions: PERMISSIONS, expiresAt: null },
      settings: {
        name: 'test key',
        permissions: [...permissions],
        expiresAt: expiresAt?.toISOString(),
      },
    });

  return {
    database,
    app,
    clock,
    config,
    async createAccount({ mode = 'sandbox', balanceUsd = '10.00', permissions = PERMISSIONS } = {}) {
      const account = await createAccount(createContext(db, clock), { mode }, clearSecretBox);
      const amount = parseUsd(balanceUsd) ?? 0n;
      if (amount > 0n) {
        referenceCounter += 1;
        await creditDeposit(createContext(db, systemClock), {
          accountId: account.id,
          amountMicros: amount,
          reference: `test-${account.id}-${referenceCounter}`,
        });
      }
      const issued = await addKey(account.id, permissions);
      return { accountId: account.id, key: issued.key, keyId: issued.record.id };
    },
    addKey,
    request(key, injectOptions) {
      const headers = { ...(injectOptions.headers ?? {}) } as Record<string, string>;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      return app.inject({ ...injectOptions, headers });
    },
    async close() {
      await app.close();
      if (!options.database) await database.close();
    },
  };
}
