import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountStatus } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { SESSION_IDLE_MS, SESSION_TOUCH_MS } from '../../src/dashboard/sessions.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import type { TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { countEntries } from '../helpers/ledger.js';
import { marketCreated, ndjson } from '../markets/events.js';
import { named, type StreamService, startStreamService } from './service.js';

/**
 * An open stream is checked again while it lasts (docs/api.md#event-streams): a key revoked,
 * expired or stripped of the permission, an account suspended, a dashboard session ended — each
 * ends the stream with the code the same request would get now, as its last event, within the auth
 * cache's sync, and no minute is charged after. Across two API instances on one database (each its
 * own verification cache and revocation-feed sync), as deployed.
 */

let service: StreamService;
let ctx: TestContext;
const SYNC_MS = 1000;

beforeAll(async () => {
  service = await startStreamService({
    config: { ...DASHBOARD_TEST_CONFIG, AUTH_CACHE_SYNC_MS: String(SYNC_MS) },
  });
  ctx = service.ctx;
  const report = await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'acc-m' })]));
  expect(report).toMatchObject({ refused: 0 });
});
afterAll(() => service.close());

/** The periodic look after the sync interval: each stream's access is due to be checked again. */
async function lookAfterSync(on: TestContext = ctx): Promise<void> {
  on.clock.advance(SYNC_MS);
  await on.app.services.streams.sweep();
}

/** Past the next minute, looked at in steps (a jump past 30 s would make the stream look too slow). */
async function nextMinute(on: TestContext = ctx): Promise<void> {
  for (let i = 0; i < 4; i++) {
    on.clock.advance(15_000);
    await on.app.services.streams.sweep();
  }
}

async function ended(client: OpenEventStream, code: string): Promise<void> {
  await client.finished();
  expect(client.events.at(-1)).toMatchObject({ event: 'error', data: { code } });
}

const charges = (accountId: string) => countEntries(ctx.database.db, accountId, 'charge');

/** Waits until the minute charged at connect (coalesced) is on the ledger. */
async function firstMinuteBooked(db: TestDatabase['db'], accountId: string): Promise<void> {
  while ((await countEntries(db, accountId, 'charge')) < 1) await new Promise((r) => setTimeout(r, 10));
}

describe('an open stream whose access ends', () => {
  it('a price stream ends API_KEY_REVOKED when its key is revoked, and is not charged again', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const other = await ctx.addKey(account.accountId);
    const client = await service.open('/stream/prices?symbols=SOL', account.key);
    await client.until(() => named(client, 'price').length >= 1);
    await firstMinuteBooked(ctx.database.db, account.accountId);
    const revoked = await ctx.request(other.key, { method: 'DELETE', url: `/api/v1/keys/${account.keyId}` });
    expect(revoked.statusCode).toBe(200);
    await lookAfterSync();
    await ended(client, 'API_KEY_REVOKED');
    await nextMinute();
    expect(await charges(account.accountId)).toBe(1);
  });

  it('a webhook stream ends API_KEY_REVOKED when its key is revoked', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const other = await ctx.addKey(account.accountId);
    const client = await service.open('/webhooks/stream', account.key);
    expect(client.response.status).toBe(200);
    await ctx.request(other.key, { method: 'DELETE', url: `/api/v1/keys/${account.keyId}` });
    await lookAfterSync();
    await ended(client, 'API_KEY_REVOKED');
  });

  it('a market stream ends ACCOUNT_SUSPENDED once the suspension reaches the instance, its next minute not charged', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const client = await service.open('/stream/markets?ids=acc-m', account.key);
    await client.until(() => named(client, 'market').length >= 1);
    await firstMinuteBooked(ctx.database.db, account.accountId);
    // As the operator's `sibyl accounts suspend` does: the change is recorded in the revocation feed.
    await setAccountStatus(createContext(ctx.database.db, ctx.clock), {
      accountId: account.accountId,
      status: 'suspended',
    });
    await ctx.app.services.authenticator.cache.sync(ctx.database.db);
    await lookAfterSync();
    await ended(client, 'ACCOUNT_SUSPENDED');
    await nextMinute();
    expect(await charges(account.accountId)).toBe(1);
  });

  it('ends API_KEY_EXPIRED when the key expires, and PERMISSION_DENIED when the permission is taken away', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const expiring = await ctx.addKey(
      account.accountId,
      ['price'],
      new Date(ctx.clock.now().getTime() + 30_000),
    );
    const narrowed = await ctx.addKey(account.accountId, ['price', 'markets']);
    const first = await service.open('/stream/prices?symbols=SOL', expiring.key);
    const second = await service.open('/stream/markets?ids=acc-m', narrowed.key);
    await first.until(() => named(first, 'price').length >= 1);
    await second.until(() => named(second, 'market').length >= 1);
    const patched = await ctx.request(account.key, {
      method: 'PATCH',
      url: `/api/v1/keys/${narrowed.record.id}`,
      payload: { permissions: ['price'] },
    });
    expect(patched.statusCode).toBe(200);
    await lookAfterSync();
    await ended(second, 'PERMISSION_DENIED');
    expect(first.ended()).toBe(false);
    ctx.clock.advance(29_000);
    await lookAfterSync();
    await ended(first, 'API_KEY_EXPIRED');
  });
});

describe('a dashboard stream', () => {
  let alice: DashboardClient;
  const open = () =>
    openEventStream(`${alice.base}/dashboard/api/sandbox/stream/markets?ids=acc-m`, {
      cookie: alice.cookie as string,
      'sec-fetch-site': 'same-origin',
    });

  beforeAll(async () => {
    const address = ctx.app.server.address() as AddressInfo;
    alice = new DashboardClient(`http://127.0.0.1:${address.port}`);
  });

  it('ends SESSION_EXPIRED when its session signs out', async () => {
    await alice.signIn();
    const client = await open();
    await client.until(() => named(client, 'market').length >= 1);
    const out = await alice.call('POST', '/dashboard/api/auth/logout');
    expect(out.status).toBe(200);
    await lookAfterSync();
    await ended(client, 'SESSION_EXPIRED');
  });

  it('keeps a page open only as a stream signed in, its last_seen_at written at most once a minute', async () => {
    await alice.signIn();
    const token = (alice.cookie as string).split('=')[1] as string;
    const row = async () => {
      const [found] = await ctx.database.db.query<{ last_seen_at: Date; version: string }>(
        'SELECT last_seen_at, xmin::text AS version FROM dashboard_sessions WHERE token_hash = $1',
        [createHash('sha256').update(token).digest()],
      );
      if (!found) throw new Error('the session row is gone');
      return { lastSeen: found.last_seen_at.getTime(), version: found.version };
    };
    const client = await open();
    await client.until(() => named(client, 'market').length >= 1);
    const versions = new Set([(await row()).version]);
    // 150 checks a second apart: the session is read at each, its row written twice (a minute, then
    // two minutes, after the last write), and the idle end never comes nearer than 12 hours less a minute.
    for (let second = 0; second < 150; second++) {
      await lookAfterSync();
      const now = ctx.clock.now().getTime();
      const { lastSeen, version } = await row();
      versions.add(version);
      expect(now - lastSeen, `after ${second + 1} s`).toBeLessThan(SESSION_TOUCH_MS);
    }
    expect(client.ended()).toBe(false);
    expect(versions.size).toBe(3);
    const session = await alice.call('GET', '/dashboard/api/auth/session');
    expect(session.status).toBe(200);
    const idleEnd = Date.parse((session.body.session as { idleExpiresAt: string }).idleExpiresAt);
    expect(idleEnd).toBeGreaterThan(ctx.clock.now().getTime() + SESSION_IDLE_MS - SESSION_TOUCH_MS);
    // Signed out: the next check, a second later as before the throttle, ends the stream.
    expect((await alice.call('POST', '/dashboard/api/auth/logout')).status).toBe(200);
    await lookAfterSync();
    await ended(client, 'SESSION_EXPIRED');
  });

  it('ends ACCOUNT_SUSPENDED when its account is suspended', async () => {
    await alice.signIn();
    const client = await open();
    await client.until(() => named(client, 'market').length >= 1);
    const overview = await alice.call('GET', '/dashboard/api/sandbox/overview');
    const accountId = (overview.body.account as { id: string }).id;
    await setAccountStatus(createContext(ctx.database.db, ctx.clock), { accountId, status: 'suspended' });
    await ctx.app.services.authenticator.cache.sync(ctx.database.db);
    await lookAfterSync();
    await ended(client, 'ACCOUNT_SUSPENDED');
    await nextMinute();
    expect(await charges(accountId)).toBe(1);
  });
});

describe(`two API instances on one ${usingPostgres ? 'PostgreSQL' : 'PGlite'} database`, () => {
  let database: TestDatabase;
  let a: StreamService;
  let b: StreamService;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = { AUTH_CACHE_SYNC_MS: String(SYNC_MS) };
    a = await startStreamService({ database, config });
    b = await startStreamService({ database, config });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.close();
  });

  it('a key revoked through one instance ends its stream on the other once that one has read the revocation feed', async () => {
    const account = await a.ctx.createAccount({ mode: 'sandbox' });
    const other = await a.ctx.addKey(account.accountId);
    const prices = await a.open('/stream/prices?symbols=SOL', account.key);
    const webhooks = await a.open('/webhooks/stream', account.key);
    await prices.until(() => named(prices, 'price').length >= 1);
    await firstMinuteBooked(database.db, account.accountId);
    const revoked = await b.ctx.request(other.key, {
      method: 'DELETE',
      url: `/api/v1/keys/${account.keyId}`,
    });
    expect(revoked.statusCode).toBe(200);
    // Instance A's own sync of the feed (its timer does it every AUTH_CACHE_SYNC_MS).
    await a.ctx.app.services.authenticator.cache.sync(database.db);
    await lookAfterSync(a.ctx);
    await ended(prices, 'API_KEY_REVOKED');
    await ended(webhooks, 'API_KEY_REVOKED');
    await nextMinute(a.ctx);
    expect(await countEntries(database.db, account.accountId, 'charge')).toBe(1);
  });
});
