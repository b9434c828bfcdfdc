import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount, TestContext } from '../helpers/context.js';
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

function endpointView(account: TestAccount, id: string) {
  return ctx.request(account.key, { method: 'GET', url: `/api/v1/webhooks/endpoints/${id}` });
}

describe('endpoint health', () => {
  it('disables an endpoint whose deliveries all failed for 5 days with at least 20 failed; endpoint.disabled goes to the others', async () => {
    const start = new Date();
    ctx.clock.set(start);
    const account = await ctx.createAccount();
    const failing = (await create(account, { url: `${receiver.url}/down/h`, eventTypes: ['*'] })).json();
    const healthy = (
      await create(account, { url: `${receiver.url}/up/h`, eventTypes: ['endpoint.disabled'] })
    ).json();
    // 19 failed deliveries, failing for almost 4 days: too few and too recent.
    for (let i = 0; i < 19; i++) await depositEvent(account);
    await runAllAttempts();
    expect((await endpointView(account, failing.id)).json()).toMatchObject({
      enabled: true,
      disabledAt: null,
    });

    // Past 5 days of failing, still 19: the count holds it.
    ctx.clock.set(new Date(start.getTime() + 5 * 86_400_000 + 1000));
    expect((await endpointView(account, failing.id)).json().enabled).toBe(true);
    // The 20th fails for good: disabled then.
    await depositEvent(account);
    await runAllAttempts();
    const view = (await endpointView(account, failing.id)).json();
    expect(view.enabled).toBe(false);
    expect(view.disabledAt).not.toBeNull();
    expect(view.disabledReason).toContain('20 failed deliveries');

    const got = receiver.received.filter((r) => r.url === '/up/h');
    expect(got).toHaveLength(1);
    // Signed with the healthy endpoint's secret (its timestamp is the test clock's, days ahead).
    const headers = got[0]?.headers as Record<string, string>;
    expect(headers['webhook-id']).toMatch(new RegExp(`^evt_[1-9A-HJ-NP-Za-km-z]{24}_${healthy.id}$`));
    const event = JSON.parse(got[0]?.body as string) as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe('endpoint.disabled');
    expect(event.data).toMatchObject({
      endpointId: failing.id,
      url: `${receiver.url}/down/h`,
      failingSince: start.toISOString(),
      failedDeliveries: 20,
    });
    // Not to the endpoint disabled.
    const own = (
      await ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/webhooks/endpoints/${failing.id}/deliveries?eventType=endpoint.disabled`,
      })
    ).json();
    expect(own.deliveries).toEqual([]);
  });

  it('a success resets the streak: an endpoint that delivered within the window stays enabled', async () => {
    const start = new Date();
    ctx.clock.set(start);
    const account = await ctx.createAccount();
    const flaky = (await create(account, { url: `${receiver.url}/down/f`, eventTypes: ['*'] })).json();
    for (let i = 0; i < 10; i++) await depositEvent(account);
    await runAllAttempts();
    // One delivery succeeds on day 4…
    ctx.clock.set(new Date(start.getTime() + 4 * 86_400_000));
    receiver.setHandler(() => 200);
    await depositEvent(account);
    await queue.drain();
    receiver.setHandler((r) => (r.url.startsWith('/down') ? 500 : 200));
    // …then 20 fail, the last past day 5 after the first failure, but not 5 days after that success.
    for (let i = 0; i < 20; i++) await depositEvent(account);
    await runAllAttempts();
    expect((await endpointView(account, flaky.id)).json().enabled).toBe(true);
  });
});
