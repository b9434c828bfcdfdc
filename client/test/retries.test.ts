import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount, TestContext } from '../../test/helpers/context.js';
import { balanceOf, countEntries } from '../../test/helpers/ledger.js';
import { createSibylClient, type SibylClientOptions, unwrap } from '../src/index.js';
import { type ConnectionPlan, recordingSleep, startProxy, startService, type TcpProxy } from './helpers.js';

// Idempotency keys and retries against the real service, through a TCP proxy that drops
// connections or answers for the service; waits are recorded, never slept.
let ctx: TestContext;
let baseUrl: string;
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  ({ ctx, baseUrl } = await startService());
});
afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await ctx.close();
});

async function through(
  plans: ConnectionPlan[],
  account: TestAccount,
  options: Partial<SibylClientOptions> = {},
) {
  const proxy = await startProxy(baseUrl, plans);
  proxies.push(proxy);
  const { sleep, waits } = recordingSleep();
  const sibyl = createSibylClient({
    baseUrl: proxy.url,
    apiKey: account.key,
    sleep,
    random: () => 0,
    ...options,
  });
  return { proxy, sibyl, waits };
}

const serviceUnavailable = (retryAfter?: string): ConnectionPlan => ({
  status: 503,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  body: { error: 'Shutting down', code: 'SERVICE_UNAVAILABLE', requestId: 'req_proxy' },
});

describe('idempotency keys', () => {
  it('sends a new key with every paid POST, and none with a GET or a POST that takes none', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const { proxy, sibyl } = await through([], account);
    await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL'] } }));
    await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL'] } }));
    await unwrap(sibyl.GET('/api/v1/account'));
    await unwrap(sibyl.POST('/api/v1/keys', { body: { name: 'no key here', permissions: ['price'] } }));
    const keys = proxy.idempotencyKeys();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(2);
  });

  it('keeps a key given by the caller', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const { proxy, sibyl } = await through([], account);
    const first = await sibyl.POST('/api/v1/price/batch', {
      body: { symbols: ['SOL'] },
      params: { header: { 'idempotency-key': 'order-42' } },
    });
    const again = await sibyl.POST('/api/v1/price/batch', {
      body: { symbols: ['SOL'] },
      params: { header: { 'idempotency-key': 'order-42' } },
    });
    expect(proxy.idempotencyKeys()).toEqual(['order-42', 'order-42']);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data?.requestId).toBe(first.data?.requestId);
  });

  it('reuses the key when it retries a POST whose answer was lost: charged once, answered by a replay', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const { proxy, sibyl, waits } = await through(['drop-answer'], account);
    const batch = await sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL', 'JUP'] } });
    expect(batch.response.status).toBe(200);
    expect(batch.response.headers.get('idempotent-replayed')).toBe('true');
    expect(batch.data?.costUsd).toBe('0.07');
    const [first, retry] = proxy.idempotencyKeys();
    expect(proxy.idempotencyKeys()).toHaveLength(2);
    expect(retry).toBe(first);
    expect(waits).toEqual([250]);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(930_000n);
  });
});

describe('retries', () => {
  it('retries a GET whose connection was dropped', async () => {
    const account = await ctx.createAccount();
    const { proxy, sibyl, waits } = await through(['drop', 'drop'], account);
    const me = await unwrap(sibyl.GET('/api/v1/account'));
    expect(me.balanceUsd).toBe('10.00');
    expect(proxy.received).toHaveLength(3);
    expect(waits).toEqual([250, 500]); // backoff: the upper half of 500 ms, then of 1 s (random 0)
  });

  it('gives up after maxRetries with the network error', async () => {
    const account = await ctx.createAccount();
    const { proxy, sibyl } = await through(['drop', 'drop', 'drop'], account, { maxRetries: 2 });
    const failure = await sibyl.GET('/api/v1/account').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TypeError);
    expect(proxy.received).toHaveLength(3);
  });

  it('never retries a POST without an Idempotency-Key after a network error: it may have run', async () => {
    const account = await ctx.createAccount();
    const { proxy, sibyl, waits } = await through(['drop-answer'], account);
    const failure = await sibyl
      .POST('/api/v1/keys', { body: { name: 'once', permissions: ['price'] } })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TypeError);
    expect(proxy.received).toHaveLength(1);
    expect(waits).toEqual([]);
    const keys = await unwrap(sibyl.GET('/api/v1/keys'));
    expect(keys.keys.filter((k) => k.name === 'once')).toHaveLength(1);
  });

  it('retries a 503 after its Retry-After, a paid POST with the same key, charging once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const { proxy, sibyl, waits } = await through([serviceUnavailable('5')], account);
    const batch = await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL'] } }));
    expect(batch.costUsd).toBe('0.06');
    expect(waits).toEqual([5000]);
    const keys = proxy.idempotencyKeys();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(940_000n);
  });

  it('backs off on a 503 without Retry-After, and returns one whose Retry-After is too long', async () => {
    const account = await ctx.createAccount();
    const backoff = await through([serviceUnavailable(), serviceUnavailable()], account, { random: () => 1 });
    expect((await backoff.sibyl.GET('/api/v1/account')).response.status).toBe(200);
    expect(backoff.waits).toEqual([500, 1000]);

    const long = await through([serviceUnavailable('300')], account);
    const answer = await long.sibyl.GET('/api/v1/account');
    expect(answer.response.status).toBe(503);
    expect(answer.error?.code).toBe('SERVICE_UNAVAILABLE');
    expect(long.waits).toEqual([]);
    expect(long.proxy.received).toHaveLength(1);
  });

  it('retries a 502 only when repeating is harmless', async () => {
    const account = await ctx.createAccount();
    const badGateway: ConnectionPlan = { status: 502, body: { message: 'upstream' } };
    const get = await through([badGateway], account);
    expect((await get.sibyl.GET('/api/v1/account')).response.status).toBe(200);
    expect(get.waits).toEqual([250]);

    const post = await through([badGateway], account);
    const created = await post.sibyl.POST('/api/v1/keys', {
      body: { name: 'maybe', permissions: ['price'] },
    });
    expect(created.response.status).toBe(502);
    expect(post.proxy.received).toHaveLength(1);
  });

  it('waits out 409 IDEMPOTENCY_KEY_IN_USE and retries with the same key', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const inUse: ConnectionPlan = {
      status: 409,
      headers: { 'retry-after': '1' },
      body: { error: 'Still running', code: 'IDEMPOTENCY_KEY_IN_USE', requestId: 'req_proxy' },
    };
    const { proxy, sibyl, waits } = await through([inUse], account);
    const batch = await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL'] } }));
    expect(batch.costUsd).toBe('0.06');
    expect(waits).toEqual([1000]);
    const keys = proxy.idempotencyKeys();
    expect(keys[1]).toBe(keys[0]);
  });
});
