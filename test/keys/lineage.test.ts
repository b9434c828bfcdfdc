import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_KEYS } from '../../src/keys/keys.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * A key cannot multiply its own throughput by minting or rotating keys: its children and its
 * rotation successors draw on its rate-limit bucket, and every usable key counts towards the cap.
 */
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ config: { RATE_LIMIT_PER_SECOND: '50', RATE_LIMIT_BURST: '100' } });
});
afterAll(async () => {
  await ctx.close();
});

const post = (key: string, url: string, payload?: object) =>
  ctx.request(key, { method: 'POST', url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
const account = (key: string) => ctx.request(key, { method: 'GET', url: '/api/v1/account' });

async function slowManager(owner: TestAccount): Promise<{ id: string; key: string }> {
  const response = await post(owner.key, '/keys', {
    name: 'slow',
    permissions: ['keys', 'account'],
    rateLimit: { requestsPerSecond: 1, burst: 2 },
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('rate limits follow the key lineage', () => {
  it("a rate-capped key's children draw on its bucket: 30 parallel requests over 10 children let 2 through", async () => {
    const owner = await ctx.createAccount();
    const slow = await slowManager(owner);
    const children: string[] = [];
    for (let i = 0; i < 10; i++) {
      ctx.clock.advance(1000); // one token back for each creation
      const child = await post(slow.key, '/keys', { name: `child ${i}`, permissions: ['account'] });
      expect(child.statusCode).toBe(200);
      children.push(child.json().key);
    }
    ctx.clock.advance(10_000); // the shared bucket is full again: 2 requests
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => account(children[i % children.length] as string)),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(2);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(28);
  });

  it('a rotation successor shares the bucket of the key it replaces', async () => {
    const owner = await ctx.createAccount();
    const target = (
      await post(owner.key, '/keys', {
        name: 'rotating',
        permissions: ['account'],
        rateLimit: { requestsPerSecond: 1, burst: 2 },
      })
    ).json();
    const rotated = (await post(owner.key, `/keys/${target.id}/rotate`)).json();
    const statuses = [];
    for (const key of [target.key, rotated.newKey.key, target.key, rotated.newKey.key]) {
      statuses.push((await account(key)).statusCode);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('keys created by a key on the default limit keep their own buckets', async () => {
    const owner = await ctx.createAccount();
    const a = (await post(owner.key, '/keys', { name: 'a', permissions: ['account'] })).json();
    const b = (await post(owner.key, '/keys', { name: 'b', permissions: ['account'] })).json();
    const both = await Promise.all([
      ...Array.from({ length: 100 }, () => account(a.key)),
      ...Array.from({ length: 100 }, () => account(b.key)),
    ]);
    expect(both.filter((r) => r.statusCode === 200)).toHaveLength(200);
  });
});

describe('the usable-key cap counts keys in a rotation grace period', () => {
  it(`a chain of rotations cannot hold more than ${MAX_ACTIVE_KEYS} usable keys`, async () => {
    const owner = await ctx.createAccount(); // 1 key
    let current = (await post(owner.key, '/keys', { name: 'chain', permissions: ['account'] })).json();
    const outcomes: number[] = [];
    for (let i = 0; i < 40; i++) {
      const rotated = await post(owner.key, `/keys/${current.id}/rotate`);
      outcomes.push(rotated.statusCode);
      if (rotated.statusCode !== 200) {
        expect(rotated.json()).toEqual({
          error: `An account can hold at most ${MAX_ACTIVE_KEYS} active keys`,
          code: 'MAX_KEYS_EXCEEDED',
          details: { maxKeys: MAX_ACTIVE_KEYS },
          requestId: rotated.headers['x-request-id'],
        });
        break;
      }
      current = rotated.json().newKey;
    }
    // The owner's key and the chain: 25 usable keys after 23 rotations; the 24th is refused.
    expect(outcomes.filter((s) => s === 200)).toHaveLength(MAX_ACTIVE_KEYS - 2);
    expect(outcomes.at(-1)).toBe(409);
    const usable = (await ctx.request(owner.key, { method: 'GET', url: '/api/v1/keys' }))
      .json()
      .keys.filter((k: { isActive: boolean }) => k.isActive);
    expect(usable).toHaveLength(MAX_ACTIVE_KEYS);
    // Revoking a key in its grace period frees its place at once.
    const graceKey = usable.find((k: { rotatedTo?: string }) => k.rotatedTo);
    await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${graceKey.id}` });
    expect((await post(owner.key, `/keys/${current.id}/rotate`)).statusCode).toBe(200);
  });

  it('keys in a grace period take the places that creation and rotation need', async () => {
    const owner = await ctx.createAccount(); // 1 key
    const ids: string[] = [];
    for (let i = 0; i < MAX_ACTIVE_KEYS - 2; i++) {
      ids.push((await post(owner.key, '/keys', { name: `k${i}` })).json().id);
    }
    expect((await post(owner.key, `/keys/${ids[0]}/rotate`)).statusCode).toBe(200); // 25 usable
    const created = await post(owner.key, '/keys', { name: 'one more' });
    expect(created.statusCode).toBe(409);
    expect(created.json().code).toBe('MAX_KEYS_EXCEEDED');
    const rotated = await post(owner.key, `/keys/${ids[1]}/rotate`);
    expect(rotated.statusCode).toBe(409);
    expect(rotated.json().code).toBe('MAX_KEYS_EXCEEDED');
    // Once the grace period is over, the old key no longer counts.
    ctx.clock.advance(60 * 60_000);
    expect((await post(owner.key, '/keys', { name: 'now it fits' })).statusCode).toBe(200);
  });
});
