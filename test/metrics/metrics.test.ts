import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { afterCommit } from '../../src/db/after-commit.js';
import { startMetricsServer } from '../../src/http/metrics-server.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

let ctx: TestContext;
let account: TestAccount;
let server: FastifyInstance;
let metricsUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  const started = await startMetricsServer(loadConfig({ METRICS_PORT: '0' }).metrics);
  if (!started) throw new Error('the metrics listener did not start');
  server = started;
  const address = server.server.address() as AddressInfo;
  metricsUrl = `http://127.0.0.1:${address.port}/metrics`;
});
afterAll(async () => {
  await server.close();
  await ctx.close();
});

/** The value of one sample of the exposition text, 0 when absent. */
async function sample(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('GET /metrics', () => {
  it('listens only when METRICS_PORT is set, on loopback by default', async () => {
    expect(await startMetricsServer(loadConfig({}).metrics)).toBeNull();
    expect((server.server.address() as AddressInfo).address).toBe('127.0.0.1');
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(await response.text()).toContain('# TYPE sibyl_http_requests_total counter');
  });

  it('counts answers by route and status, with latency, and charges by operation', async () => {
    const route = { route: '/api/v1/price/:symbolOrMint', method: 'GET', status: '200' };
    const before = await sample('sibyl_http_requests_total', route);
    const charged = await sample('sibyl_charges_total', { operation: 'getPrice' });
    const usd = await sample('sibyl_charged_usd_total', { operation: 'getPrice' });
    for (let i = 0; i < 3; i++) {
      const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL' });
      expect(response.statusCode).toBe(200);
    }
    expect(await sample('sibyl_http_requests_total', route)).toBe(before + 3);
    expect(await sample('sibyl_charges_total', { operation: 'getPrice' })).toBe(charged + 3);
    expect(await sample('sibyl_charged_usd_total', { operation: 'getPrice' })).toBeCloseTo(usd + 0.03, 9);
    expect(
      await sample('sibyl_http_request_duration_seconds_count', { route: route.route, method: 'GET' }),
    ).toBeGreaterThanOrEqual(3);
    expect(await sample('sibyl_charge_batch_size_count')).toBeGreaterThanOrEqual(1);

    // An unknown path is one label, not one per URL.
    await ctx.request(account.key, { method: 'GET', url: '/api/v1/no/such/thing' });
    expect(
      await sample('sibyl_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts refusals by code, and no charge for them', async () => {
    const before = await sample('sibyl_auth_failures_total', { code: 'INVALID_API_KEY' });
    const charged = await sample('sibyl_charges_total', { operation: 'getPrice' });
    const refused = await ctx.request('pk_test_thisisnotakey', { method: 'GET', url: '/api/v1/price/SOL' });
    expect(refused.statusCode).toBe(401);
    expect(await sample('sibyl_auth_failures_total', { code: 'INVALID_API_KEY' })).toBe(before + 1);
    expect(await sample('sibyl_charges_total', { operation: 'getPrice' })).toBe(charged);
  });

  it('counts refunds by the operation of their charge, once committed', async () => {
    const before = await sample('sibyl_refunds_total', { operation: 'schedulePriceCheck' });
    const scheduled = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/schedule',
      payload: {
        symbol: 'SOL',
        resolutionTimestamp: new Date(ctx.clock.now().getTime() + 3_600_000).toISOString(),
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    });
    expect(scheduled.statusCode).toBe(200);
    const cancel = await ctx.request(account.key, {
      method: 'POST',
      url: `/api/v1/price/scheduled/${scheduled.json().jobId}/cancel`,
    });
    expect(cancel.statusCode).toBe(200);
    expect(await sample('sibyl_refunds_total', { operation: 'schedulePriceCheck' })).toBe(before + 1);
    expect(
      await sample('sibyl_refunded_usd_total', { operation: 'schedulePriceCheck' }),
    ).toBeGreaterThanOrEqual(0.05);
  });

  it('counts price venue calls by venue and outcome', async () => {
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toMatch(/sibyl_venue_calls_total\{venue="sandbox-\w+",kind="quote",outcome="ok"\} [1-9]/);
  });
});

describe('afterCommit', () => {
  it('runs after a commit, never after a rollback, at once outside a transaction', async () => {
    const ran: string[] = [];
    await ctx.database.db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      afterCommit(tx, () => ran.push('committed'));
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['committed']);
    await expect(
      ctx.database.db.transaction(async (tx) => {
        afterCommit(tx, () => ran.push('rolled back'));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    afterCommit(ctx.database.db, () => ran.push('no transaction'));
    expect(ran).toEqual(['committed', 'no transaction']);
  });
});
