import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

// One database for the file; each case an app of its own, with its own logger (and accounts).
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/** A context whose logger writes JSON lines into an array, at the given level. */
async function logged(level: string): Promise<{ ctx: TestContext; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    { logLevel: level as never },
    {
      write: (line: string) => {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  ctx = await createTestContext({ logger, database });
  return { ctx, lines };
}

describe('request log', () => {
  it('at info, one line per request with its outcome and ids, and never the key', async () => {
    const { ctx, lines } = await logged('info');
    const account = await ctx.createAccount();
    const ok = await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL' });
    const bad = await ctx.request(`${account.key}x`, { method: 'GET', url: '/api/v1/price/SOL' });
    expect([ok.statusCode, bad.statusCode]).toEqual([200, 401]);
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(2);
    expect(requestLines[0]).toMatchObject({
      method: 'GET',
      url: '/api/v1/price/SOL',
      statusCode: 200,
      accountId: account.accountId,
      keyId: account.keyId,
      reqId: ok.json().requestId,
    });
    expect(requestLines[1]).toMatchObject({ statusCode: 401 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(account.key);
    expect(text).not.toContain(account.key.slice(8));
  });

  it('an API key in the URL is refused, and the logged URL carries neither the query nor the key', async () => {
    const { ctx, lines } = await logged('info');
    const account = await ctx.createAccount();
    const urls = [
      `/api/v1/account?api_key=${account.key}`,
      `/api/v1/account?x=1&token=${encodeURIComponent(account.key)}`,
      `/api/v1/price/${account.key}`,
      `/api/v1/nothing-here?key=${account.key}`,
    ];
    const responses = [];
    for (const url of urls) responses.push(await ctx.request(null, { method: 'GET', url }));
    // With a valid header as well, a key in the URL is still refused: it has leaked into logs on the way.
    responses.push(
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/account?api_key=${account.key}` }),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([401, 401, 401, 404, 401]);
    for (const r of [responses[0], responses[1], responses[2], responses[4]]) {
      expect(r?.json()).toEqual({
        error:
          'API keys are not accepted in the URL, where logs and browser histories keep them: send the header Authorization: Bearer <key>, and replace this key, which has leaked',
        code: 'INVALID_API_KEY',
        requestId: r?.headers['x-request-id'],
      });
    }
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines.map((l) => l.url)).toEqual([
      '/api/v1/account',
      '/api/v1/account',
      '/api/v1/price/pk_test_[redacted]',
      '/api/v1/nothing-here',
      '/api/v1/account',
    ]);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(account.key.slice(8));
  });

  it('above info, a request writes nothing at all', async () => {
    const { ctx, lines } = await logged('warn');
    const account = await ctx.createAccount();
    for (const url of ['/api/v1/price/SOL', '/api/v1/nope']) {
      await ctx.request(account.key, { method: 'GET', url });
    }
    expect(lines).toEqual([]);
  });
});
