import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warnExpiringKeys } from '../../src/keys/expiry.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const DAY = 86_400_000;

describe('key.expiring', () => {
  it('is made 7 days and 1 day before expiresAt, each once, however many workers run the task at once', async () => {
    ctx.clock.set('2026-12-01T00:00:00.000Z');
    const account = await ctx.createAccount();
    const expiresAt = new Date(ctx.clock.now().getTime() + 10 * DAY);
    const key = await ctx.addKey(account.accountId, ['price'], expiresAt);
    const hook = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      payload: { url: 'https://hooks.example.com/keys', eventTypes: ['key.expiring'] },
    });
    const endpointId = hook.json().id as string;
    const deps = { db: ctx.database.db, clock: ctx.clock };
    const run = async (n: number) =>
      (await Promise.all(Array.from({ length: n }, () => warnExpiringKeys(deps, ctx.clock.now())))).reduce(
        (a, b) => a + b,
        0,
      );

    expect(await run(3)).toBe(0); // 10 days left
    ctx.clock.advance(3 * DAY); // 7 days left
    expect(await run(4)).toBe(1);
    ctx.clock.advance(DAY); // 6 days left: already warned
    expect(await run(2)).toBe(0);
    ctx.clock.advance(5 * DAY + 60_000); // under a day left
    expect(await run(4)).toBe(1);
    expect(await run(1)).toBe(0);
    ctx.clock.advance(DAY); // expired: nothing more
    expect(await run(1)).toBe(0);

    const rows = await ctx.database.db.query<{ payload: string }>(
      'SELECT payload FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at',
      [endpointId],
    );
    expect(rows.map((r) => JSON.parse(r.payload).data)).toEqual([
      { keyId: key.record.id, name: 'test key', expiresAt: expiresAt.toISOString(), daysLeft: 7 },
      { keyId: key.record.id, name: 'test key', expiresAt: expiresAt.toISOString(), daysLeft: 1 },
    ]);
  });
});
