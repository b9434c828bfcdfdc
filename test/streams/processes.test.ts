import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { databaseEnv, runCli } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';
import { marketCreated, ndjson } from '../markets/events.js';
import { named } from './service.js';

/**
 * An open stream re-checked while it lasts (docs/api.md#event-streams), across two real `sibyl serve`
 * processes on one PostgreSQL database, as deployed: a key revoked through one process, an account
 * suspended by the operator's command, ends the streams held by the other with the code, once that
 * process has read the revocation feed (every AUTH_CACHE_SYNC_MS) — and no minute is charged after.
 */

const SYNC_MS = 200;
/** Far more than a sync and a sweep (a second) on a loaded machine; a stream not ended by then never is. */
const BOUND_MS = 20_000;

let ctx: TestContext;
const services: ServiceProcess[] = [];
const clients: OpenEventStream[] = [];
let a: string;
let b: string;

async function serve(): Promise<string> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...databaseEnv(ctx.database.location),
    DB_POOL_SIZE: '4',
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  services.push(
    await startService('serve', { ...env, AUTH_CACHE_SYNC_MS: String(SYNC_MS) }, httpReady(base)),
  );
  return `${base}/api/v1`;
}

async function open(url: string, key: string): Promise<OpenEventStream> {
  const client = await openEventStream(url, { authorization: `Bearer ${key}` });
  clients.push(client);
  expect(client.response.status).toBe(200);
  return client;
}

/** The stream ends within the bound, its last event the error `code`. */
async function endsWith(client: OpenEventStream, code: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `still open after ${BOUND_MS} ms; events: ${client.events.map((e) => e.event).join(', ')}`,
          ),
        ),
      BOUND_MS,
    );
  });
  try {
    await Promise.race([client.finished(), late]);
  } finally {
    clearTimeout(timer);
  }
  expect(client.events.at(-1)).toMatchObject({ event: 'error', data: { code } });
}

/** Waits until the account has `n` charges on the ledger (the minute each stream pays at connect). */
async function charged(accountId: string, n: number): Promise<void> {
  while ((await countEntries(ctx.database.db, accountId, 'charge')) < n) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext();
  const report = await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'proc-m' })]));
  expect(report).toMatchObject({ refused: 0 });
  [a, b] = await Promise.all([serve(), serve()]);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  for (const service of services) await service.kill();
  if (!usingPostgres) return;
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

describe.runIf(usingPostgres)(
  'streams on one sibyl serve process, access changed through another (PostgreSQL)',
  () => {
    it('a key revoked through B ends its price and webhook streams on A with API_KEY_REVOKED; no minute charged after', async () => {
      const account = await ctx.createAccount({ mode: 'sandbox' });
      const keys = await ctx.addKey(account.accountId);
      const prices = await open(`${a}/stream/prices?symbols=SOL`, account.key);
      const webhooks = await open(`${a}/webhooks/stream`, account.key);
      await prices.until(() => named(prices, 'price').length >= 1);
      await charged(account.accountId, 1);
      const before = await countEntries(ctx.database.db, account.accountId, 'charge');

      const revoked = await fetch(`${b}/keys/${account.keyId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${keys.key}` },
      });
      expect(revoked.status).toBe(200);

      await endsWith(prices, 'API_KEY_REVOKED');
      await endsWith(webhooks, 'API_KEY_REVOKED');
      expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(before);
      await expectLedgerReconciles(ctx.database.db);
    });

    it('an account suspended with `sibyl accounts suspend` ends its market stream on A with ACCOUNT_SUSPENDED', async () => {
      const account = await ctx.createAccount({ mode: 'sandbox' });
      const markets = await open(`${a}/stream/markets?ids=proc-m`, account.key);
      await markets.until(() => named(markets, 'market').length >= 1);
      await charged(account.accountId, 1);
      const before = await countEntries(ctx.database.db, account.accountId, 'charge');

      const suspended = runCli(
        ['accounts', 'suspend', account.accountId],
        databaseEnv(ctx.database.location),
      );
      expect(suspended.status, suspended.stderr).toBe(0);

      await endsWith(markets, 'ACCOUNT_SUSPENDED');
      expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(before);
      await expectLedgerReconciles(ctx.database.db);
    });
  },
);
