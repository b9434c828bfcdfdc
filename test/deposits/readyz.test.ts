import { afterAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';

const contexts: TestContext[] = [];
afterAll(async () => {
  for (const ctx of contexts) await ctx.close();
});

describe('/readyz and the deposit watcher', () => {
  it('says the watcher is off without SOLANA_RPC_URL and DEPOSIT_ADDRESS', async () => {
    const ctx = await createTestContext();
    contexts.push(ctx);
    expect((await ctx.request(null, { method: 'GET', url: '/readyz' })).json().deposits).toEqual({
      watcher: 'off',
      lastPollAt: null,
      lastSuccessAt: null,
      lastError: null,
      lagSlots: null,
    });
  });

  it('shows the last poll, its error and the lag in slots when it is on', async () => {
    const ctx = await createTestContext({
      config: {
        SOLANA_RPC_URL: 'http://127.0.0.1:9',
        DEPOSIT_ADDRESS: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
      },
    });
    contexts.push(ctx);
    const at = new Date('2026-11-25T12:00:00Z');
    await ctx.database.db.query(
      `INSERT INTO deposit_watcher (id, last_poll_at, last_success_at, last_error, finalized_slot, processed_slot)
       VALUES (1, $1, $1, 'getSlot: timeout', 1000, 990)`,
      [at],
    );
    const answer = await ctx.request(null, { method: 'GET', url: '/readyz' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().deposits).toEqual({
      watcher: 'on',
      lastPollAt: at.toISOString(),
      lastSuccessAt: at.toISOString(),
      lastError: 'getSlot: timeout',
      lagSlots: 10,
    });
  });
});
