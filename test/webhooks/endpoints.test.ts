import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositData, endpointWorld } from './endpoint-world.js';

type World = Awaited<ReturnType<typeof endpointWorld>>;
let world: World;
let ctx: World['ctx'];
let receiver: World['receiver'];
let queue: World['queue'];
let create: World['create'];
let depositEvent: World['depositEvent'];

beforeAll(async () => {
  world = await endpointWorld();
  ({ ctx, receiver, queue, create, depositEvent } = world);
});
afterAll(() => world.close());

describe('registered endpoints', () => {
  it('create answers the secret once; list and get never show it; the 11th is 409 MAX_ENDPOINTS_EXCEEDED', async () => {
    const account = await ctx.createAccount();
    const created = await create(account, {
      url: `${receiver.url}/a`,
      eventTypes: ['deposit.credited'],
      description: 'billing',
    });
    expect(created.statusCode).toBe(200);
    const endpoint = created.json();
    expect(endpoint).toMatchObject({
      url: `${receiver.url}/a`,
      eventTypes: ['deposit.credited'],
      description: 'billing',
      enabled: true,
    });
    expect(endpoint.id).toMatch(/^we_[1-9A-HJ-NP-Za-km-z]{24}$/);
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.costUsd).toBeUndefined();

    const list = await ctx.request(account.key, { method: 'GET', url: '/api/v1/webhooks/endpoints' });
    expect(list.json().endpoints.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(list.json())).not.toContain('whsec_');
    const one = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/webhooks/endpoints/${endpoint.id}`,
    });
    expect(one.json()).toMatchObject({ id: endpoint.id, enabled: true });
    expect(one.json().secret).toBeUndefined();

    for (let i = 1; i < 10; i++) {
      expect((await create(account, { url: `${receiver.url}/n${i}`, eventTypes: ['*'] })).statusCode).toBe(
        200,
      );
    }
    const eleventh = await create(account, { url: `${receiver.url}/n11`, eventTypes: ['*'] });
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json()).toMatchObject({ code: 'MAX_ENDPOINTS_EXCEEDED', details: { maxEndpoints: 10 } });
    // Free: the balance is untouched.
    const me = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account' });
    expect(me.json().balanceUsd).toBe('10.00');
  });

  it('refuses an unknown event type by name and a bad URL: 400 VALIDATION_ERROR; "*" with others is every type', async () => {
    const account = await ctx.createAccount();
    const unknown = await create(account, {
      url: `${receiver.url}/x`,
      eventTypes: ['deposit.credited', 'balance.hight'],
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().code).toBe('VALIDATION_ERROR');
    expect(unknown.json().details.problems[0]).toMatchObject({
      path: 'body.eventTypes[1]',
      message: 'is not an event type: balance.hight',
    });
    expect(unknown.json().error).toContain('balance.hight');
    const plain = await create(account, { url: 'http://example.com/hook', eventTypes: ['*'] });
    expect(plain.statusCode).toBe(400);
    expect(plain.json().details.problems[0].path).toBe('body.url');
    // A list that names "*" is every type, kept as ["*"].
    const mixed = await create(account, { url: `${receiver.url}/x`, eventTypes: ['*', 'job.failed'] });
    expect(mixed.statusCode).toBe(200);
    expect(mixed.json().eventTypes).toEqual(['*']);
    const empty = await create(account, { url: `${receiver.url}/x`, eventTypes: [] });
    expect(empty.statusCode).toBe(400);
    const list = await ctx.request(account.key, { method: 'GET', url: '/api/v1/webhooks/endpoints' });
    expect(list.json().endpoints.map((e: { id: string }) => e.id)).toEqual([mixed.json().id]);
  });

  it('permissions: keys to create, rotate, change and delete; account to list and read', async () => {
    const account = await ctx.createAccount();
    const created = (await create(account, { url: `${receiver.url}/p`, eventTypes: ['*'] })).json();
    const reader = await ctx.addKey(account.accountId, ['account']);
    const denied = await ctx.request(reader.key, {
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      payload: { url: `${receiver.url}/p`, eventTypes: ['*'] },
    });
    expect(denied.json().code).toBe('PERMISSION_DENIED');
    for (const [method, url, payload] of [
      ['POST', `/api/v1/webhooks/endpoints/${created.id}/rotate-secret`, undefined],
      ['PATCH', `/api/v1/webhooks/endpoints/${created.id}`, { enabled: false }],
      ['DELETE', `/api/v1/webhooks/endpoints/${created.id}`, undefined],
    ] as const) {
      const answer = await ctx.request(reader.key, { method, url, ...(payload ? { payload } : {}) });
      expect(answer.statusCode, `${method} ${url}`).toBe(403);
    }
    expect(
      (await ctx.request(reader.key, { method: 'GET', url: '/api/v1/webhooks/endpoints' })).statusCode,
    ).toBe(200);
    expect(
      (await ctx.request(reader.key, { method: 'GET', url: `/api/v1/webhooks/endpoints/${created.id}` }))
        .statusCode,
    ).toBe(200);
  });

  it('PATCH changes and DELETE removes; another account’s endpoint is 404', async () => {
    const account = await ctx.createAccount();
    const stranger = await ctx.createAccount();
    const created = (await create(account, { url: `${receiver.url}/c`, eventTypes: ['*'] })).json();
    const patched = await ctx.request(account.key, {
      method: 'PATCH',
      url: `/api/v1/webhooks/endpoints/${created.id}`,
      payload: { eventTypes: ['job.failed', 'job.completed'], description: 'jobs', enabled: false },
    });
    expect(patched.json()).toMatchObject({
      eventTypes: ['job.failed', 'job.completed'],
      description: 'jobs',
      enabled: false,
      disabledReason: 'disabled by its owner',
    });
    const bad = await ctx.request(account.key, {
      method: 'PATCH',
      url: `/api/v1/webhooks/endpoints/${created.id}`,
      payload: { eventTypes: ['job.nope'] },
    });
    expect(bad.json().details.problems[0].message).toBe('is not an event type: job.nope');
    for (const method of ['GET', 'DELETE'] as const) {
      const answer = await ctx.request(stranger.key, {
        method,
        url: `/api/v1/webhooks/endpoints/${created.id}`,
      });
      expect(answer.statusCode).toBe(404);
      expect(answer.json().code).toBe('NOT_FOUND');
    }
    const deleted = await ctx.request(account.key, {
      method: 'DELETE',
      url: `/api/v1/webhooks/endpoints/${created.id}`,
    });
    expect(deleted.json()).toMatchObject({ id: created.id, deleted: true });
    const gone = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/webhooks/endpoints/${created.id}`,
    });
    expect(gone.statusCode).toBe(404);
  });

  it('GET /webhooks/event-types needs no key and lists each type with the JSON Schema of its data', async () => {
    const answer = await ctx.request(null, { method: 'GET', url: '/api/v1/webhooks/event-types' });
    expect(answer.statusCode).toBe(200);
    const types = answer.json().eventTypes as {
      name: string;
      schema: { properties: Record<string, unknown> };
    }[];
    expect(types.map((t) => t.name)).toEqual([
      'resolution.completed',
      'resolution.failed',
      'job.completed',
      'job.failed',
      'deposit.credited',
      'balance.low',
      'balance.depleted',
      'key.expiring',
      'endpoint.disabled',
    ]);
    expect(Object.keys(types.find((t) => t.name === 'balance.low')?.schema.properties ?? {})).toEqual([
      'thresholdUsd',
      'balanceUsd',
      'accountId',
    ]);
  });
});

describe('delivering account events to endpoints', () => {
  it('each subscribed endpoint receives the event signed with its own secret; no other account or mode does', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const stranger = await ctx.createAccount();
    const live = await ctx.createAccount({ mode: 'live' });
    const mine = (
      await create(account, { url: `${receiver.url}/mine`, eventTypes: ['deposit.credited'] })
    ).json();
    const other = (
      await create(account, { url: `${receiver.url}/jobs-only`, eventTypes: ['job.failed'] })
    ).json();
    const theirs = (await create(stranger, { url: `${receiver.url}/theirs`, eventTypes: ['*'] })).json();
    const liveOne = (await create(live, { url: `${receiver.url}/live`, eventTypes: ['*'] })).json();
    expect([other.id, theirs.id, liveOne.id]).toHaveLength(3);

    const event = await depositEvent(account);
    await queue.drain();
    const got = receiver.received.filter((r) => r.url === '/mine');
    expect(got).toHaveLength(1);
    const headers = got[0]?.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(`${event?.id}_${mine.id}`);
    const body = new Webhook(mine.secret).verify(got[0]?.body as string, headers);
    expect(body).toEqual({
      id: event?.id,
      type: 'deposit.credited',
      createdAt: ctx.clock.now().toISOString(),
      mode: 'sandbox',
      data: depositData,
    });
    expect(() => new Webhook(theirs.secret).verify(got[0]?.body as string, headers)).toThrow();
    for (const path of ['/jobs-only', '/theirs', '/live']) {
      expect(
        receiver.received.filter((r) => r.url === path),
        path,
      ).toEqual([]);
    }
  });

  it('after a rotation, both secrets verify for 24 hours, then only the new one', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const endpoint = (await create(account, { url: `${receiver.url}/rotating`, eventTypes: ['*'] })).json();
    const rotated = await ctx.request(account.key, {
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`,
    });
    expect(rotated.statusCode).toBe(200);
    const { secret } = rotated.json();
    expect(secret).not.toBe(endpoint.secret);
    await depositEvent(account);
    await queue.drain();
    const [first] = receiver.received.filter((r) => r.url === '/rotating');
    const headers = first?.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(first?.body as string, headers)).toBeTruthy();
    expect(new Webhook(endpoint.secret).verify(first?.body as string, headers)).toBeTruthy();

    // 24 hours and a minute later, only the new secret signs. (The receiver checks its own clock's
    // tolerance, so the stamp is checked here against the manual clock by hand: only the signatures count.)
    ctx.clock.advance(24 * 3600_000 + 60_000);
    await depositEvent(account);
    await queue.drain();
    const second = receiver.received.filter((r) => r.url === '/rotating')[1];
    expect(String(second?.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('a deleted endpoint’s waiting deliveries are cancelled and nothing more is sent to it', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const endpoint = (await create(account, { url: `${receiver.url}/deleted`, eventTypes: ['*'] })).json();
    await depositEvent(account);
    const deleted = await ctx.request(account.key, {
      method: 'DELETE',
      url: `/api/v1/webhooks/endpoints/${endpoint.id}`,
    });
    expect(deleted.json().cancelledDeliveries).toBe(1);
    await depositEvent(account);
    await queue.drain();
    expect(receiver.received.filter((r) => r.url === '/deleted')).toEqual([]);
  });
});
