import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

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
  ctx = await createTestContext({ logger });
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

  it('above info, a request writes nothing at all', async () => {
    const { ctx, lines } = await logged('warn');
    const account = await ctx.createAccount();
    for (const url of ['/api/v1/price/SOL', '/api/v1/nope']) {
      await ctx.request(account.key, { method: 'GET', url });
    }
    expect(lines).toEqual([]);
  });
});
