import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { chargeAccount } from '../../src/ledger/ledger.js';
import { balanceAlertTask } from '../../src/webhooks/balance-alerts.js';
import type { TestAccount } from '../helpers/context.js';
import { type DeliveryFixture, deliveryFixture } from './delivery-fixture.js';

/**
 * Balance alerts reach an account's registered endpoints: the ledger writes the alert with the
 * crossing, the worker's task records its event and deliveries, the delivery queue sends it signed.
 */
let fixture: DeliveryFixture;
let live: TestAccount;
let sandbox: TestAccount;

const SECRET = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;

async function endpoint(account: TestAccount, mode: string, id: string, types: string[]) {
  const now = fixture.ctx.clock.now();
  await fixture.ctx.database.db.query(
    `INSERT INTO webhook_endpoints (id, account_id, mode, url, event_types, enabled, secret, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, true, $6, $7, $7)`,
    [id, account.accountId, mode, `https://hooks.example.com/${id}`, types, SECRET, now],
  );
}

beforeAll(async () => {
  fixture = await deliveryFixture({ leaseMs: 30_000, answer: 200 });
  live = await fixture.ctx.createAccount({ mode: 'live', balanceUsd: '5.50' });
  sandbox = await fixture.ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.00' });
  await endpoint(live, 'live', 'we_alerts', ['balance.low', 'balance.depleted']);
  await endpoint(live, 'live', 'we_keys', ['key.expiring']);
  await endpoint(sandbox, 'sandbox', 'we_sandbox', ['*']);
});
afterAll(() => fixture.ctx.close());

/** Runs the worker's task, then sends what it queued; answers the verified payloads sent. */
async function deliver(): Promise<{ endpoint: string; payload: Record<string, unknown> }[]> {
  const task = balanceAlertTask(createContext(fixture.ctx.database.db, fixture.ctx.clock));
  await task.run(fixture.ctx.clock.now(), new AbortController().signal);
  fixture.sent.length = 0;
  const claimed = await fixture.handler.claim(10, fixture.ctx.clock.now());
  for (const delivery of claimed) await fixture.handler.process(delivery);
  return fixture.sent.map((request) => ({
    endpoint: request.url.split('/').pop() as string,
    payload: new Webhook(SECRET).verify(
      request.body as string,
      request.headers as Record<string, string>,
    ) as Record<string, unknown>,
  }));
}

describe('balance alert events', () => {
  it('balance.low reaches the endpoint subscribed to it, once, signed, with the threshold and the balance', async () => {
    // A live account's default threshold: 5.00.
    await chargeAccount(fixture.ctx.database.db, {
      accountId: live.accountId,
      amountMicros: 1_000_000n,
      operation: 'test',
    });
    const sent = await deliver();
    expect(sent).toEqual([
      {
        endpoint: 'we_alerts',
        payload: {
          id: expect.stringMatching(/^evt_[1-9A-HJ-NP-Za-km-z]{24}$/),
          type: 'balance.low',
          createdAt: expect.any(String),
          mode: 'live',
          data: { thresholdUsd: '5.00', balanceUsd: '4.50', accountId: live.accountId },
        },
      },
    ]);
    // Nothing more to send: the alert's event was recorded once.
    expect(await deliver()).toEqual([]);
    const events = await fixture.ctx.database.db.query<{ type: string }>(
      'SELECT type FROM account_events WHERE account_id = $1',
      [live.accountId],
    );
    expect(events).toEqual([{ type: 'balance.low' }]);
  });

  it('balance.depleted reaches the endpoint on the first 402 of a paid request', async () => {
    const price = () => fixture.ctx.request(sandbox.key, { method: 'GET', url: '/api/v1/price/SOL' });
    expect((await price()).statusCode).toBe(402);
    expect((await price()).statusCode).toBe(402);
    const sent = await deliver();
    expect(sent).toEqual([
      {
        endpoint: 'we_sandbox',
        payload: expect.objectContaining({
          type: 'balance.depleted',
          mode: 'sandbox',
          data: { balanceUsd: '0.00', accountId: sandbox.accountId },
        }),
      },
    ]);
  });
});
