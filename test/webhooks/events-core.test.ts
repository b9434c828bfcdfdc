import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { recordAccountEvent, recordAccountEvents } from '../../src/webhooks/events.js';
import type { TestAccount } from '../helpers/context.js';
import { type DeliveryFixture, deliveryFixture } from './delivery-fixture.js';

let fixture: DeliveryFixture;
let live: TestAccount;
let sandbox: TestAccount;
let other: TestAccount;

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

/** An endpoint row as POST /webhooks/endpoints writes it (secret stored as issued: the clear box). */
async function endpoint(account: TestAccount, mode: string, id: string, types: string[], enabled = true) {
  const now = fixture.ctx.clock.now();
  await fixture.ctx.database.db.query(
    `INSERT INTO webhook_endpoints (id, account_id, mode, url, event_types, enabled, secret, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
    [id, account.accountId, mode, `https://hooks.example.com/${id}`, types, enabled, SECRET, now],
  );
}

beforeAll(async () => {
  fixture = await deliveryFixture({ leaseMs: 30_000, answer: 200 });
  live = await fixture.ctx.createAccount({ mode: 'live' });
  sandbox = await fixture.ctx.createAccount({ mode: 'sandbox' });
  other = await fixture.ctx.createAccount({ mode: 'live' });
  await endpoint(live, 'live', 'we_deposits', ['deposit.credited']);
  await endpoint(live, 'live', 'we_all', ['*']);
  await endpoint(live, 'live', 'we_off', ['*'], false);
  await endpoint(live, 'live', 'we_keys', ['key.expiring']);
  await endpoint(sandbox, 'sandbox', 'we_sandbox', ['*']);
  await endpoint(other, 'live', 'we_other', ['*']);
});
afterAll(() => fixture.ctx.close());

const data = {
  id: 'sol:abc:0',
  status: 'credited' as const,
  token: 'USDC' as const,
  amount: '5',
  usdValue: '5.00',
  rateUsd: '1',
  signature: 'abc',
  slot: 1,
  reference: 'sol:abc:0',
  memo: null,
  createdAt: '2026-12-01T00:00:00.000Z',
  balanceUsd: '15.00',
};

describe('recordAccountEvent', () => {
  it('writes the event and one delivery per subscribed, enabled endpoint of that account and mode, in the caller’s transaction', async () => {
    const db = fixture.ctx.database.db;
    const recorded = await withTransaction(createContext(db, fixture.ctx.clock), (tx) =>
      recordAccountEvent(tx.tx, { accountId: live.accountId, mode: 'live', type: 'deposit.credited', data }),
    );
    expect(recorded?.id).toMatch(/^evt_[1-9A-HJ-NP-Za-km-z]{24}$/);
    expect(recorded?.deliveries).toBe(2);
    const rows = await db.query<{ id: string; endpoint_id: string; type: string; payload: string }>(
      'SELECT id, endpoint_id, type, payload FROM webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id',
      [recorded?.id],
    );
    expect(rows.map((r) => r.endpoint_id)).toEqual(['we_all', 'we_deposits']);
    expect(rows.map((r) => r.id)).toEqual([`${recorded?.id}_we_all`, `${recorded?.id}_we_deposits`]);
    const payload = JSON.parse(rows[0]?.payload as string);
    expect(Object.keys(payload)).toEqual(['id', 'type', 'createdAt', 'mode', 'data']);
    expect(payload).toMatchObject({ id: recorded?.id, type: 'deposit.credited', mode: 'live', data });
    const [event] = await db.query<{ account_id: string; data: unknown }>(
      'SELECT account_id, data FROM account_events WHERE id = $1',
      [recorded?.id],
    );
    expect(event).toEqual({ account_id: live.accountId, data });
  });

  it('rolls back with the caller: no event, no delivery', async () => {
    const db = fixture.ctx.database.db;
    let id: string | undefined;
    await expect(
      withTransaction(createContext(db, fixture.ctx.clock), async (tx) => {
        id = (
          await recordAccountEvent(tx.tx, {
            accountId: live.accountId,
            mode: 'live',
            type: 'deposit.credited',
            data,
          })
        )?.id;
        throw new Error('the caller fails');
      }),
    ).rejects.toThrow('the caller fails');
    expect(await db.query('SELECT 1 FROM account_events WHERE id = $1', [id])).toEqual([]);
    expect(await db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [id])).toEqual([]);
  });

  it('never reaches another account’s or another mode’s endpoint', async () => {
    const db = fixture.ctx.database.db;
    const recorded = await recordAccountEvent(db, {
      accountId: sandbox.accountId,
      mode: 'sandbox',
      type: 'key.expiring',
      data: { keyId: 'key_x', name: null, expiresAt: '2026-12-09T00:00:00.000Z', daysLeft: 7 },
    });
    const rows = await db.query<{ endpoint_id: string }>(
      'SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1',
      [recorded?.id],
    );
    expect(rows.map((r) => r.endpoint_id)).toEqual(['we_sandbox']);
  });

  it('makes an event with a once-key at most once', async () => {
    const db = fixture.ctx.database.db;
    const input = {
      accountId: live.accountId,
      mode: 'live' as const,
      type: 'key.expiring' as const,
      data: { keyId: 'key_y', name: 'ci', expiresAt: '2026-12-09T00:00:00.000Z', daysLeft: 1 },
      once: 'key.expiring:key_y:1',
    };
    const first = await recordAccountEvent(db, input);
    expect(first?.deliveries).toBe(2); // we_all and we_keys
    expect(await recordAccountEvent(db, input)).toBeNull();
    expect(
      await db.query("SELECT 1 FROM account_events WHERE once_key = 'key.expiring:key_y:1'"),
    ).toHaveLength(1);
  });

  it('is sent signed with the endpoint’s secret (Standard Webhooks), the body its payload as recorded', async () => {
    const db = fixture.ctx.database.db;
    fixture.sent.length = 0;
    await db.query(
      "UPDATE webhook_deliveries SET status = 'CANCELLED', due_at = NULL WHERE status = 'PENDING'",
    );
    const recorded = await recordAccountEvent(db, {
      accountId: other.accountId,
      mode: 'live',
      type: 'deposit.credited',
      data,
      at: fixture.ctx.clock.now(),
    });
    const claimed = await fixture.handler.claim(10, fixture.ctx.clock.now());
    expect(claimed.map((d) => d.id)).toEqual([`${recorded?.id}_we_other`]);
    for (const delivery of claimed) await fixture.handler.process(delivery);
    const [request] = fixture.sent;
    expect(request?.headers['webhook-id']).toBe(`${recorded?.id}_we_other`);
    const verified = new Webhook(SECRET).verify(
      request?.body as string,
      request?.headers as Record<string, string>,
    );
    expect(verified).toEqual({
      id: recorded?.id,
      type: 'deposit.credited',
      createdAt: fixture.ctx.clock.now().toISOString(),
      mode: 'live',
      data,
    });
    const [row] = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [
      `${recorded?.id}_we_other`,
    ]);
    expect(row?.status).toBe('DELIVERED');
  });
});

describe('recordAccountEvents', () => {
  it('records many events in one statement as recordAccountEvent does each: its deliveries, its payload, its once-key', async () => {
    const db = fixture.ctx.database.db;
    const at = fixture.ctx.clock.now();
    const deposit = (i: number) => ({ ...data, id: `sol:many:${i}`, reference: `sol:many:${i}` });
    const recorded = await withTransaction(createContext(db, fixture.ctx.clock), (tx) =>
      recordAccountEvents(tx.tx, [
        { accountId: live.accountId, mode: 'live', type: 'deposit.credited', data: deposit(0), at },
        { accountId: other.accountId, mode: 'live', type: 'deposit.credited', data: deposit(1), at },
        { accountId: sandbox.accountId, mode: 'sandbox', type: 'deposit.credited', data: deposit(2), at },
        {
          accountId: live.accountId,
          mode: 'live',
          type: 'key.expiring',
          data: { keyId: 'key_many', name: null, expiresAt: '2026-12-09T00:00:00.000Z', daysLeft: 7 },
          at,
          once: 'key.expiring:key_many:7',
        },
      ]),
    );
    expect(recorded).toHaveLength(4);
    const deliveries = await db.query<{ endpoint_id: string; payload: string; event_id: string }>(
      `SELECT endpoint_id, payload, event_id FROM webhook_deliveries WHERE event_id = ANY ($1::text[])
        ORDER BY endpoint_id, type`,
      [recorded.map((r) => r.id)],
    );
    const payloads = deliveries.map((d) => ({ endpoint: d.endpoint_id, ...JSON.parse(d.payload) }));
    expect(payloads.map((p) => [p.endpoint, p.type, p.data.id ?? p.data.keyId])).toEqual([
      ['we_all', 'deposit.credited', 'sol:many:0'],
      ['we_all', 'key.expiring', 'key_many'],
      ['we_deposits', 'deposit.credited', 'sol:many:0'],
      ['we_keys', 'key.expiring', 'key_many'],
      ['we_other', 'deposit.credited', 'sol:many:1'],
      ['we_sandbox', 'deposit.credited', 'sol:many:2'],
    ]);
    for (const p of payloads) {
      expect(Object.keys(p)).toEqual(['endpoint', 'id', 'type', 'createdAt', 'mode', 'data']);
      expect(p.createdAt).toBe(at.toISOString());
    }
    const counts = Object.fromEntries(recorded.map((r) => [r.id, r.deliveries]));
    for (const d of deliveries) expect(counts[d.event_id]).toBeGreaterThan(0);
    expect(recorded.map((r) => r.deliveries).sort()).toEqual([1, 1, 2, 2]);
    // A once-key already used: that event is not recorded again; the others are.
    const again = await recordAccountEvents(db, [
      {
        accountId: live.accountId,
        mode: 'live',
        type: 'key.expiring',
        data: { keyId: 'key_many', name: null, expiresAt: '2026-12-09T00:00:00.000Z', daysLeft: 7 },
        once: 'key.expiring:key_many:7',
      },
      { accountId: live.accountId, mode: 'live', type: 'deposit.credited', data: deposit(3) },
    ]);
    expect(again.map((r) => r.deliveries)).toEqual([2]);
    expect(await recordAccountEvents(db, [])).toEqual([]);
  });

  it('records many events in one statement, each with the deliveries recordAccountEvent would make', async () => {
    const db = fixture.ctx.database.db;
    fixture.ctx.clock.advance(60_000); // an instant no other test recorded at
    const at = fixture.ctx.clock.now();
    const job = (n: number) => ({
      jobId: `job_${n}`,
      type: 'price' as const,
      requestId: `req_${n}`,
      result: { n },
    });
    const recorded = await withTransaction(createContext(db, fixture.ctx.clock), (tx) =>
      recordAccountEvents(tx.tx, [
        { accountId: live.accountId, mode: 'live', type: 'job.completed', data: job(1), at },
        { accountId: live.accountId, mode: 'live', type: 'job.completed', data: job(2), at },
        { accountId: sandbox.accountId, mode: 'sandbox', type: 'job.completed', data: job(3), at },
        { accountId: other.accountId, mode: 'live', type: 'deposit.credited', data, at },
      ]),
    );
    // live: we_all for each (we_deposits, we_keys not subscribed, we_off disabled); sandbox: we_sandbox; other: we_other.
    expect(recorded.map((r) => r.deliveries)).toEqual([1, 1, 1, 1]);
    const rows = await db.query<{ id: string; endpoint_id: string; event_id: string; payload: string }>(
      `SELECT d.id, d.endpoint_id, d.event_id, d.payload FROM webhook_deliveries d
         JOIN account_events e ON e.id = d.event_id WHERE e.created_at = $1 ORDER BY d.endpoint_id`,
      [at],
    );
    expect(rows.map((r) => r.endpoint_id)).toEqual(['we_all', 'we_all', 'we_other', 'we_sandbox']);
    for (const row of rows) {
      expect(row.id).toBe(`${row.event_id}_${row.endpoint_id}`);
      const payload = JSON.parse(row.payload);
      expect(Object.keys(payload)).toEqual(['id', 'type', 'createdAt', 'mode', 'data']);
      expect(payload).toMatchObject({ id: row.event_id, createdAt: at.toISOString() });
      const [event] = await db.query<{ data: unknown }>('SELECT data FROM account_events WHERE id = $1', [
        row.event_id,
      ]);
      expect(event?.data).toEqual(payload.data);
    }
    expect(
      rows.map((r) => `${r.endpoint_id} ${JSON.parse(r.payload).data.jobId ?? 'deposit'}`).sort(),
    ).toEqual(['we_all job_1', 'we_all job_2', 'we_other deposit', 'we_sandbox job_3']);
  });
});
