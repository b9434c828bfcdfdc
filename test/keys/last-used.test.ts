import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyUses, LAST_USED_RESOLUTION_MS } from '../../src/keys/last-used.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `lastUsedAt` of a key (docs/api.md#api-keys): when it last authenticated a request, to the minute,
 * written after the request and never moved back by an instance that writes late.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

async function keysOf(key: string): Promise<{ id: string; lastUsedAt?: string }[]> {
  const answer = await ctx.request(key, { method: 'GET', url: '/api/v1/keys' });
  // The write of this request's own use is not awaited by the request: wait for it here.
  await ctx.app.services.authenticator.uses.idle();
  return answer.json().keys;
}

describe('lastUsedAt', () => {
  it('is absent on a key never used, and the time of its last request once used, to the minute', async () => {
    const owner = await ctx.createAccount();
    const unused = await ctx.addKey(owner.accountId);
    const first = ctx.clock.now().toISOString();
    await keysOf(owner.key);
    let keys = await keysOf(owner.key);
    expect(keys.find((k) => k.id === unused.record.id)).not.toHaveProperty('lastUsedAt');
    expect(keys.find((k) => k.id === owner.keyId)?.lastUsedAt).toBe(first);

    // Within the minute: not written again.
    ctx.clock.advance(LAST_USED_RESOLUTION_MS - 1000);
    keys = await keysOf(owner.key);
    expect(keys.find((k) => k.id === owner.keyId)?.lastUsedAt).toBe(first);

    // A minute on: the new time.
    ctx.clock.advance(1000);
    const later = ctx.clock.now().toISOString();
    await keysOf(owner.key);
    keys = await keysOf(owner.key);
    expect(keys.find((k) => k.id === owner.keyId)?.lastUsedAt).toBe(later);
  });

  it('counts a refused request of a valid key, but not a revoked key’s', async () => {
    const owner = await ctx.createAccount({ permissions: ['keys', 'price'] });
    const other = await ctx.addKey(owner.accountId, ['price']);
    ctx.clock.advance(LAST_USED_RESOLUTION_MS);
    const refused = await ctx.request(other.key, { method: 'GET', url: '/api/v1/keys' });
    expect(refused.json().code).toBe('PERMISSION_DENIED');
    const used = ctx.clock.now().toISOString();
    await ctx.app.services.authenticator.uses.idle();
    expect((await keysOf(owner.key)).find((k) => k.id === other.record.id)?.lastUsedAt).toBe(used);

    const revoke = await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${other.record.id}` });
    expect(revoke.statusCode).toBe(200);
    ctx.clock.advance(LAST_USED_RESOLUTION_MS);
    const revoked = await ctx.request(other.key, { method: 'GET', url: '/api/v1/account' });
    expect(revoked.json().code).toBe('API_KEY_REVOKED');
    expect((await keysOf(owner.key)).find((k) => k.id === other.record.id)?.lastUsedAt).toBe(used);
  });

  it('never moves back when another instance writes an older time late', async () => {
    const owner = await ctx.createAccount();
    const { db } = ctx.database;
    const now = ctx.clock.now().getTime();
    const one = new KeyUses(db);
    const two = new KeyUses(db);
    one.seen(owner.keyId, now + 5 * LAST_USED_RESOLUTION_MS);
    await one.idle();
    two.seen(owner.keyId, now + 2 * LAST_USED_RESOLUTION_MS);
    await two.idle();
    const [row] = await db.query<{ last_used_at: Date }>('SELECT last_used_at FROM api_keys WHERE id = $1', [
      owner.keyId,
    ]);
    expect(row?.last_used_at.getTime()).toBe(now + 5 * LAST_USED_RESOLUTION_MS);
  });

  it('reports a write that fails instead of throwing it at the request', async () => {
    const failures: unknown[] = [];
    const uses = new KeyUses({ query: () => Promise.reject(new Error('database gone')) } as never, (err) =>
      failures.push(err),
    );
    expect(() => uses.seen('key_x', Date.now())).not.toThrow();
    await uses.idle();
    expect(failures).toEqual([new Error('database gone')]);
  });
});
