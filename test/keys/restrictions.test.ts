import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { countEntries } from '../helpers/ledger.js';

let ctx: TestContext;
let owner: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ config: { TRUSTED_PROXIES: '10.0.0.0/8' } });
  owner = await ctx.createAccount();
});
afterAll(async () => {
  await ctx.close();
});

async function keyWith(settings: object): Promise<string> {
  const response = await ctx.request(owner.key, {
    method: 'POST',
    url: '/api/v1/keys',
    payload: { name: 'restricted', ...settings },
  });
  expect(response.statusCode).toBe(200);
  return response.json().key;
}

function call(key: string, options: { ip?: string; xff?: string; origin?: string } = {}) {
  return ctx.app.inject({
    method: 'GET',
    url: '/api/v1/account',
    remoteAddress: options.ip ?? '127.0.0.1',
    headers: {
      authorization: `Bearer ${key}`,
      ...(options.xff ? { 'x-forwarded-for': options.xff } : {}),
      ...(options.origin ? { origin: options.origin } : {}),
    },
  });
}

describe('IP allow lists', () => {
  it('admits listed addresses and ranges, refuses others with 403 IP_NOT_ALLOWED', async () => {
    const key = await keyWith({ allowedIps: ['203.0.113.0/24', '2001:db8::/32'] });
    expect((await call(key, { ip: '203.0.113.200' })).statusCode).toBe(200);
    expect((await call(key, { ip: '::ffff:203.0.113.9' })).statusCode).toBe(200);
    expect((await call(key, { ip: '2001:db8::42' })).statusCode).toBe(200);
    const refused = await call(key, { ip: '198.51.100.1' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      error: 'This API key cannot be used from 198.51.100.1',
      code: 'IP_NOT_ALLOWED',
      details: { ip: '198.51.100.1' },
      requestId: refused.headers['x-request-id'],
    });
  });

  it('believes X-Forwarded-For only from a trusted proxy, right-most untrusted hop', async () => {
    const key = await keyWith({ allowedIps: ['203.0.113.7'] });
    // Directly from the internet, a forged header changes nothing.
    expect((await call(key, { ip: '198.51.100.1', xff: '203.0.113.7' })).statusCode).toBe(403);
    // Through the trusted proxy, the client's address is the hop the proxy appended.
    expect((await call(key, { ip: '10.0.0.2', xff: '203.0.113.7' })).statusCode).toBe(200);
    // A client-supplied left-most entry is ignored.
    expect((await call(key, { ip: '10.0.0.2', xff: '203.0.113.7, 198.51.100.1' })).statusCode).toBe(403);
  });

  it('a list with the switch off is stored but not enforced', async () => {
    const key = await keyWith({ allowedIps: ['203.0.113.7'], ipRestrictionEnabled: false });
    expect((await call(key, { ip: '198.51.100.1' })).statusCode).toBe(200);
  });
});

describe('origin allow lists and CORS', () => {
  it('refuses a non-matching Origin with 403, answers allowed origins with CORS headers', async () => {
    const key = await keyWith({ allowedOrigins: ['https://app.example.com', 'https://*.example.org'] });
    const allowed = await call(key, { origin: 'https://app.example.com' });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(allowed.headers.vary).toContain('Origin');
    expect(allowed.headers['access-control-expose-headers']).toContain('x-request-id');
    expect((await call(key, { origin: 'https://shop.example.org' })).statusCode).toBe(200);
    expect((await call(key, { origin: 'https://a.b.example.org' })).statusCode).toBe(200);

    for (const origin of [
      'https://evil.com',
      'http://app.example.com',
      'https://app.example.com:8443',
      'https://example.org',
      'https://app.example.com.evil.com',
      'null',
    ]) {
      const refused = await call(key, { origin });
      expect(refused.statusCode, origin).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('refuses wildcards over a public suffix or an address, and a bare *', async () => {
    const entries = [
      'https://*.com',
      'https://*',
      'https://*.co.uk',
      'https://*.github.io',
      'http://*.localhost',
      'https://*.127.0.0.1',
      'https://*.*.example.com',
    ];
    const response = await ctx.request(owner.key, {
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: 'wide', allowedOrigins: entries },
    });
    expect(response.statusCode).toBe(400);
    const wildcard = (entry: string) =>
      `"${entry}" puts a wildcard over a public suffix or an address: a wildcard stands for the subdomains of a domain someone owns, like https://*.example.com`;
    expect(response.json().details.problems).toEqual([
      { path: 'body.allowedOrigins[0]', message: wildcard('https://*.com') },
      {
        path: 'body.allowedOrigins[1]',
        message: '"https://*" is not an origin like https://app.example.com',
      },
      { path: 'body.allowedOrigins[2]', message: wildcard('https://*.co.uk') },
      { path: 'body.allowedOrigins[3]', message: wildcard('https://*.github.io') },
      { path: 'body.allowedOrigins[4]', message: wildcard('http://*.localhost') },
      { path: 'body.allowedOrigins[5]', message: wildcard('https://*.127.0.0.1') },
      {
        path: 'body.allowedOrigins[6]',
        message: '"https://*.*.example.com" is not an origin like https://app.example.com',
      },
    ]);
    const fine = await keyWith({ allowedOrigins: ['https://*.example.co.uk', 'https://*.app.github.io'] });
    expect(fine).toMatch(/^pk_test_/);
  });

  it('Access-Control-Allow-Origin is the serialised origin on the list, not the header as sent', async () => {
    const key = await keyWith({ allowedOrigins: ['https://app.example.com', 'https://*.example.org'] });
    for (const [sent, echoed] of [
      ['https://APP.example.com', 'https://app.example.com'],
      ['https://app.example.com:443', 'https://app.example.com'],
      ['https://Shop.Example.org', 'https://shop.example.org'],
    ]) {
      const response = await call(key, { origin: sent });
      expect(response.statusCode, sent).toBe(200);
      expect(response.headers['access-control-allow-origin'], sent).toBe(echoed);
    }
    const preflight = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/price/SOL',
      headers: { origin: 'https://APP.example.com:443', 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const junk = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/price/SOL',
      headers: { origin: 'not an origin', 'access-control-request-method': 'GET' },
    });
    expect(junk.statusCode).toBe(204);
    expect(junk.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a request without Origin (a server) passes; a key without an origin list never answers browsers', async () => {
    const restricted = await keyWith({ allowedOrigins: ['https://app.example.com'] });
    expect((await call(restricted)).statusCode).toBe(200);
    const open = await keyWith({});
    const fromBrowser = await call(open, { origin: 'https://anywhere.example' });
    expect(fromBrowser.statusCode).toBe(200);
    expect(fromBrowser.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers CORS preflights without credentials', async () => {
    const preflight = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/price/SOL',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
    });
  });

  it('refusals are free', async () => {
    const key = await keyWith({ allowedIps: ['203.0.113.7'], permissions: ['price'] });
    await ctx.app.inject({
      method: 'GET',
      url: '/api/v1/price/SOL',
      remoteAddress: '198.51.100.1',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await countEntries(ctx.database.db, owner.accountId, 'charge')).toBe(0);
  });
});
