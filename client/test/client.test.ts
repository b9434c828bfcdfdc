import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../../test/helpers/context.js';
import { balanceOf } from '../../test/helpers/ledger.js';
import { createSibylClient, requestIdOf, type Schemas, SibylApiError, unwrap } from '../src/index.js';
import { recordingSleep } from './helpers.js';

// The client against the real service: the app listening on a loopback port, a real database,
// real HTTP through the global fetch.
let ctx: TestContext;
let account: TestAccount;
let baseUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await ctx.close();
});

/** A fetch that counts requests and lets the test see every answer before the client does. */
function countingFetch(onResponse?: (response: Response) => void) {
  const seen: number[] = [];
  const fetch = async (request: Request) => {
    const response = await globalThis.fetch(request);
    seen.push(response.status);
    onResponse?.(response);
    return response;
  };
  return { fetch, seen };
}

describe('@sibyl/client', () => {
  it('prices, batches, reads history and the balance with typed answers', async () => {
    const sibyl = createSibylClient({ baseUrl: `${baseUrl}/`, apiKey: account.key });
    const single = await sibyl.GET('/api/v1/price/{symbolOrMint}', {
      params: { path: { symbolOrMint: 'SOL' } },
    });
    expect(single.response.status).toBe(200);
    const price: Schemas['PriceResult'] | undefined = single.data;
    expect(price?.symbol).toBe('SOL');
    expect(price?.vwapPrice).toBeGreaterThan(0);
    expect(requestIdOf(single)).toBe(price?.requestId);

    const batch = await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL', 'JUP'] } }));
    expect(batch.prices.map((p) => p.symbol)).toEqual(['SOL', 'JUP']);
    expect(batch.costUsd).toBe('0.07');

    const hour = Math.floor(ctx.clock.now().getTime() / 3_600_000) * 3_600_000;
    const history = await unwrap(
      sibyl.GET('/api/v1/historical/price/{symbol}', {
        params: {
          path: { symbol: 'SOL' },
          query: {
            startTime: new Date(hour - 3 * 3_600_000).toISOString(),
            endTime: new Date(hour).toISOString(),
            interval: '1h',
          },
        },
      }),
    );
    expect(history.dataPoints.length).toBeGreaterThan(0);

    const me = await unwrap(sibyl.GET('/api/v1/account'));
    expect(me.balanceUsd).toBe(history.remainingBalanceUsd);
    expect(BigInt(Math.round(Number(me.balanceUsd) * 1e6))).toBe(
      await balanceOf(ctx.database.db, account.accountId),
    );
  });

  it('turns an error answer into a SibylApiError with its code, status and requestId', async () => {
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key });
    const failed = await sibyl.GET('/api/v1/price/{symbolOrMint}', {
      params: { path: { symbolOrMint: 'NOPE' } },
    });
    expect(failed.error?.code).toBe('SYMBOL_NOT_FOUND');
    const thrown = await unwrap(
      sibyl.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'NOPE' } } }),
    ).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(SibylApiError);
    const error = thrown as SibylApiError;
    expect(error.status).toBe(404);
    expect(error.code).toBe('SYMBOL_NOT_FOUND');
    expect(error.requestId).toMatch(/^req_/);

    const wrongKey = createSibylClient({ baseUrl, apiKey: 'pk_test_notarealkey' });
    const refused = (await unwrap(wrongKey.GET('/api/v1/account')).catch((e: unknown) => e)) as SibylApiError;
    expect(refused).toBeInstanceOf(SibylApiError);
    expect(refused.code).toBe('INVALID_API_KEY');
    expect(refused.status).toBe(401);
  });

  it('retries 429 RATE_LIMIT_EXCEEDED after its Retry-After, and gives up after the allowed retries', async () => {
    const owner = await ctx.createAccount();
    const sibyl = createSibylClient({ baseUrl, apiKey: owner.key });
    const limited = await unwrap(
      sibyl.POST('/api/v1/keys', {
        body: { name: 'slow', permissions: ['account'], rateLimit: { requestsPerSecond: 1, burst: 1 } },
      }),
    );
    // The service's clock is the test's: time passes for it when the client is told to wait.
    const counting = countingFetch((response) => {
      if (response.status === 429) ctx.clock.advance(Number(response.headers.get('retry-after')) * 1000);
    });
    const { sleep, waits } = recordingSleep();
    const client = createSibylClient({ baseUrl, apiKey: limited.key, fetch: counting.fetch, sleep });
    expect((await client.GET('/api/v1/account')).response.status).toBe(200);
    const retried = await client.GET('/api/v1/account');
    expect(retried.response.status).toBe(200);
    expect(counting.seen).toEqual([200, 429, 200]);
    expect(waits).toEqual([1000]);

    const never = countingFetch();
    const impatient = createSibylClient({
      baseUrl,
      apiKey: limited.key,
      fetch: never.fetch,
      maxRateLimitRetries: 0,
    });
    const refused = await impatient.GET('/api/v1/account');
    expect(refused.error?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(never.seen).toEqual([429]);
  });

  it('never retries 429 QUOTA_EXCEEDED', async () => {
    const owner = await ctx.createAccount();
    const sibyl = createSibylClient({ baseUrl, apiKey: owner.key });
    const quota = await unwrap(
      sibyl.POST('/api/v1/keys', {
        body: { name: 'one a day', permissions: ['price'], quotas: { dailyRequests: 1 } },
      }),
    );
    const counting = countingFetch();
    const client = createSibylClient({ baseUrl, apiKey: quota.key, fetch: counting.fetch });
    const get = () =>
      client.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'SOL' } } });
    expect((await get()).response.status).toBe(200);
    const over = await get();
    expect(over.error?.code).toBe('QUOTA_EXCEEDED');
    expect(Number(over.response.headers.get('retry-after'))).toBeGreaterThan(10);
    expect(counting.seen).toEqual([200, 429]);
  });
});
