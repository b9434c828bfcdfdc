import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../helpers/context.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { endpointWorld } from './endpoint-world.js';

type World = Awaited<ReturnType<typeof endpointWorld>>;
let world: World;
let ctx: TestContext;
let receiver: HttpsReceiver;
let queue: World['queue'];
let create: World['create'];
let depositEvent: World['depositEvent'];
let runAllAttempts: World['runAllAttempts'];

beforeAll(async () => {
  world = await endpointWorld();
  ({ ctx, receiver, queue, create, depositEvent, runAllAttempts } = world);
});
afterAll(() => world.close());

describe("an endpoint's deliveries and their recovery", () => {
  it('lists them newest first with attempts, filters, pages with a cursor; 404 for another account', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const stranger = await ctx.createAccount();
    const endpoint = (await create(account, { url: `${receiver.url}/down/a`, eventTypes: ['*'] })).json();
    const events = [];
    for (let i = 0; i < 3; i++) {
      events.push(await depositEvent(account));
      ctx.clock.advance(1000);
    }
    await runAllAttempts();
    const url = `/api/v1/webhooks/endpoints/${endpoint.id}/deliveries`;
    const all = await ctx.request(account.key, { method: 'GET', url });
    expect(all.statusCode).toBe(200);
    const list = all.json();
    expect(list.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual(
      events.map((e) => e?.id).reverse(),
    );
    expect(list.deliveries[0]).toMatchObject({ type: 'deposit.credited', status: 'CALLBACK_FAILED' });
    expect(list.deliveries[0].attempts).toHaveLength(8);
    expect(list.deliveries[0].attempts[0]).toMatchObject({ attempt: 1, statusCode: 500 });
    expect(list.nextCursor).toBeNull();

    const first = (await ctx.request(account.key, { method: 'GET', url: `${url}?limit=2` })).json();
    expect(first.deliveries).toHaveLength(2);
    const second = (
      await ctx.request(account.key, { method: 'GET', url: `${url}?limit=2&cursor=${first.nextCursor}` })
    ).json();
    expect(second.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual([events[0]?.id]);
    expect(second.nextCursor).toBeNull();

    const filtered = async (q: string) =>
      (await ctx.request(account.key, { method: 'GET', url: `${url}?${q}` })).json().deliveries.length;
    expect(await filtered('status=DELIVERED')).toBe(0);
    expect(await filtered('status=CALLBACK_FAILED')).toBe(3);
    expect(await filtered('eventType=job.failed')).toBe(0);
    expect(await filtered('eventType=deposit.credited')).toBe(3);
    const since = list.deliveries[1].createdAt;
    expect(await filtered(`since=${since}`)).toBe(2);

    const forged = await ctx.request(account.key, { method: 'GET', url: `${url}?cursor=bm9uc2Vuc2U` });
    expect(forged.statusCode).toBe(400);
    expect(forged.json().code).toBe('VALIDATION_ERROR');
    const theirs = await ctx.request(stranger.key, { method: 'GET', url });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().code).toBe('NOT_FOUND');
  });

  it('recover sends the failed deliveries since a time again; more than 7 days back is 400 naming since', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const stranger = await ctx.createAccount();
    const endpoint = (await create(account, { url: `${receiver.url}/down/r`, eventTypes: ['*'] })).json();
    const older = await depositEvent(account);
    ctx.clock.advance(60_000);
    const cut = ctx.clock.now().toISOString();
    const newer = await depositEvent(account);
    await runAllAttempts();
    const recoverUrl = `/api/v1/webhooks/endpoints/${endpoint.id}/recover`;

    const tooOld = await ctx.request(account.key, {
      method: 'POST',
      url: recoverUrl,
      payload: { since: new Date(ctx.clock.now().getTime() - 8 * 86_400_000).toISOString() },
    });
    expect(tooOld.statusCode).toBe(400);
    expect(tooOld.json().details.problems[0].path).toBe('body.since');
    const theirs = await ctx.request(stranger.key, {
      method: 'POST',
      url: recoverUrl,
      payload: { since: cut },
    });
    expect(theirs.statusCode).toBe(404);

    receiver.setHandler(() => 200);
    try {
      const recovered = await ctx.request(account.key, {
        method: 'POST',
        url: recoverUrl,
        payload: { since: cut },
      });
      expect(recovered.statusCode).toBe(200);
      expect(recovered.json()).toMatchObject({ id: endpoint.id, queued: 1 });
      await queue.drain();
    } finally {
      receiver.setHandler((r) => (r.url.startsWith('/down') ? 500 : 200));
    }
    const list = (
      await ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/webhooks/endpoints/${endpoint.id}/deliveries`,
      })
    ).json();
    const byEvent = Object.fromEntries(
      list.deliveries.map((d: { eventId: string; status: string }) => [d.eventId, d]),
    );
    expect(byEvent[newer?.id as string]).toMatchObject({ status: 'DELIVERED', attemptCount: 9 });
    expect(byEvent[older?.id as string]).toMatchObject({ status: 'CALLBACK_FAILED', attemptCount: 8 });
  });
});

describe("the cursor of an endpoint's deliveries", () => {
  it('is the service’s own kind, signed for its endpoint and filters: altered, foreign or malformed is 400', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const mine = (await create(account, { url: `${receiver.url}/down/c`, eventTypes: ['*'] })).json();
    const other = (await create(account, { url: `${receiver.url}/down/d`, eventTypes: ['*'] })).json();
    // Three at the same instant: the pages part them by id.
    const events = [await depositEvent(account), await depositEvent(account), await depositEvent(account)];
    const list = (endpointId: string, query: string) =>
      ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/webhooks/endpoints/${endpointId}/deliveries?${query}`,
      });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(mine.id, `limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.statusCode).toBe(200);
      const body = page.json();
      seen.push(...body.deliveries.map((d: { eventId: string }) => d.eventId));
      cursor = body.nextCursor;
      // The markets' kind of cursor (src/http/cursor.ts): a position and its signature.
      if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    } while (cursor);
    expect(seen.sort()).toEqual(events.map((e) => e?.id).sort());

    const first = (await list(mine.id, 'limit=1')).json().nextCursor as string;
    const refused = async (endpointId: string, query: string) => {
      const answer = await list(endpointId, query);
      expect(answer.statusCode, query).toBe(400);
      expect(answer.json().code, query).toBe('VALIDATION_ERROR');
      return answer.json().details.problems[0].path as string;
    };
    // Another endpoint's list, or the same list with another filter.
    expect(await refused(other.id, `limit=1&cursor=${first}`)).toBe('query.cursor');
    expect(await refused(mine.id, `limit=1&status=PENDING&cursor=${first}`)).toBe('query.cursor');
    // Altered: another position under the same signature.
    const [payload, check] = first.split('.') as [string, string];
    const [at, id] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, string];
    const moved = Buffer.from(JSON.stringify([at, `${id}x`])).toString('base64url');
    expect(await refused(mine.id, `limit=1&cursor=${moved}.${check}`)).toBe('query.cursor');
    // The unsigned `at|id` this list handed out before, and plain garbage.
    const unsigned = Buffer.from(`${new Date().toISOString()}|${id}`).toString('base64url');
    await refused(mine.id, `cursor=${unsigned}`);
    await refused(mine.id, 'cursor=a.b.c');
    await refused(mine.id, `cursor=${'x'.repeat(600)}.y`);
  });
});
