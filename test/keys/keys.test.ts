import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_KEYS } from '../../src/keys/keys.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

function post(key: string, url: string, payload?: object) {
  return ctx.request(key, { method: 'POST', url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
}
function get(key: string, url: string) {
  return ctx.request(key, { method: 'GET', url: `/api/v1${url}` });
}

describe('POST /keys', () => {
  it('creates a key, shown once, that works at once', async () => {
    const owner = await ctx.createAccount();
    const response = await post(owner.key, '/keys', {
      name: 'trading bot',
      permissions: ['price', 'account'],
    });
    expect(response.statusCode).toBe(200);
    const created = response.json();
    expect(created).toEqual({
      requestId: response.headers['x-request-id'],
      id: expect.stringMatching(/^key_/),
      keyPrefix: created.key.slice(0, 16),
      name: 'trading bot',
      permissions: ['price', 'account'],
      isActive: true,
      allowedIps: [],
      ipRestrictionEnabled: false,
      allowedOrigins: [],
      originRestrictionEnabled: false,
      createdAt: expect.any(String),
      rateLimit: { requestsPerSecond: 50, burst: 1_000_000, isDefault: true },
      quotas: { dailyRequests: null, monthlyRequests: null, dailySpendUsd: null, monthlySpendUsd: null },
      key: expect.stringMatching(/^pk_test_[0-9A-Za-z]{38}$/),
    });
    expect((await get(created.key, '/account')).statusCode).toBe(200);
    // The new key has only what it was given.
    expect((await get(created.key, '/keys')).json().code).toBe('PERMISSION_DENIED');
    // Never listed with its secret.
    const listed = (await get(owner.key, '/keys')).json();
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(listed.keys.map((k: { id: string }) => k.id)).toContain(created.id);
  });

  it('issues pk_live_ keys for live accounts', async () => {
    const owner = await ctx.createAccount({ mode: 'live' });
    expect(owner.key.startsWith('pk_live_')).toBe(true);
    const created = (await post(owner.key, '/keys', { name: 'live' })).json();
    expect(created.key.startsWith('pk_live_')).toBe(true);
  });

  it("defaults permissions to the caller's and refuses more than the caller has", async () => {
    const owner = await ctx.createAccount({ permissions: ['keys', 'price', 'account'] });
    const defaulted = (await post(owner.key, '/keys', { name: 'copy' })).json();
    expect(defaulted.permissions.sort()).toEqual(['account', 'keys', 'price']);
    const wider = await post(owner.key, '/keys', { name: 'wider', permissions: ['price', 'markets', 'ai'] });
    expect(wider.statusCode).toBe(403);
    expect(wider.json()).toEqual({
      error: 'A key cannot grant permissions its creator lacks: markets, ai',
      code: 'PERMISSION_DENIED',
      details: { permissions: ['markets', 'ai'] },
      requestId: wider.headers['x-request-id'],
    });
  });

  it('bounds the expiry by the caller’s and validates it', async () => {
    const owner = await ctx.createAccount();
    const inAnHour = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
    const limited = (await post(owner.key, '/keys', { name: 'limited', expiresAt: inAnHour })).json();
    expect(limited.expiresAt).toBe(inAnHour);
    const child = (await post(limited.key, '/keys', { name: 'child' })).json();
    expect(child.expiresAt).toBe(inAnHour);
    const tooLong = await post(limited.key, '/keys', {
      name: 'longer',
      expiresAt: new Date(ctx.clock.now().getTime() + 7_200_000).toISOString(),
    });
    expect(tooLong.statusCode).toBe(403);
    expect(tooLong.json()).toEqual({
      error: 'A key cannot give a key looser limits than its own: expiresAt',
      code: 'PERMISSION_DENIED',
      details: { looser: ['expiresAt'] },
      requestId: tooLong.headers['x-request-id'],
    });
    for (const expiresAt of ['tomorrow', '2020-01-01T00:00:00Z']) {
      const bad = await post(owner.key, '/keys', { name: 'x', expiresAt });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().details.problems[0].path).toBe('body.expiresAt');
    }
  });

  it('names: invisible characters alone are blank, invisible ends are removed, bidirectional controls refused (create and update)', async () => {
    const owner = await ctx.createAccount();
    const BIDI =
      'must not contain bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)';
    const refusals: [string, { path: string; message: string }[]][] = [
      ['\u200b', [{ path: 'body.name', message: 'must not be blank' }]],
      ['\u200b\u2060 \ufeff', [{ path: 'body.name', message: 'must not be blank' }]],
      ['prod\u202e', [{ path: 'body.name', message: BIDI }]],
      ['\u2067prod', [{ path: 'body.name', message: BIDI }]],
      [
        '\u200f',
        [
          { path: 'body.name', message: 'must not be blank' },
          { path: 'body.name', message: BIDI },
        ],
      ],
    ];
    const target = (await post(owner.key, '/keys', { name: 'target' })).json();
    const before = (await get(owner.key, '/keys')).json().total;
    for (const [name, problems] of refusals) {
      const created = await post(owner.key, '/keys', { name });
      expect(created.statusCode, JSON.stringify(name)).toBe(400);
      expect(created.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { problems } });
      const updated = await ctx.request(owner.key, {
        method: 'PATCH',
        url: `/api/v1/keys/${target.id}`,
        payload: { name },
      });
      expect(updated.statusCode, JSON.stringify(name)).toBe(400);
      expect(updated.json().details.problems).toEqual(problems);
    }
    expect((await get(owner.key, '/keys')).json().total).toBe(before);
    // The operator's command keeps the same rule.
    const cli = await runCliOn(
      ctx.database.db,
      ['keys', 'update', target.id, '--name', 'prod\u202e', '--json'],
      {},
    );
    expect(cli.status).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body.name', message: BIDI }] },
    });

    // What a paste brings at either end goes; inside a name (an emoji sequence) nothing changes.
    for (const [sent, kept] of [
      ['\ufeffprod', 'prod'],
      ['prod\u200b', 'prod'],
      [' \u200dstaging\u2060 ', 'staging'],
      ['ops 👩\u200d💻 ❤\ufe0f', 'ops 👩\u200d💻 ❤\ufe0f'],
    ]) {
      const created = await post(owner.key, '/keys', { name: sent });
      expect(created.statusCode).toBe(200);
      expect(created.json().name).toBe(kept);
      const updated = await ctx.request(owner.key, {
        method: 'PATCH',
        url: `/api/v1/keys/${target.id}`,
        payload: { name: sent },
      });
      expect(updated.json().name).toBe(kept);
      await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${created.json().id}` });
    }
  });

  it('validates names and allow lists, naming each bad entry', async () => {
    const owner = await ctx.createAccount();
    const response = await post(owner.key, '/keys', {
      name: '   ',
      allowedIps: ['10.0.0.0/8', '10.0.0.1/8', 'not-an-ip'],
      allowedOrigins: ['https://app.example.com', 'ftp://x.example.com', 'https://x.com/path'],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details.problems).toEqual([
      { path: 'body.name', message: 'must not be blank' },
      { path: 'body.allowedIps[1]', message: '"10.0.0.1/8" has host bits set (did you mean 10.0.0.0/8?)' },
      { path: 'body.allowedIps[2]', message: '"not-an-ip" is not an IPv4 or IPv6 address or CIDR range' },
      {
        path: 'body.allowedOrigins[1]',
        message: '"ftp://x.example.com" is not an origin like https://app.example.com',
      },
      {
        path: 'body.allowedOrigins[2]',
        message: '"https://x.com/path" is not an origin like https://app.example.com',
      },
    ]);
    const enabledEmpty = await post(owner.key, '/keys', { name: 'x', ipRestrictionEnabled: true });
    expect(enabledEmpty.json().details.problems).toEqual([
      { path: 'body.ipRestrictionEnabled', message: 'needs at least one entry in allowedIps' },
    ]);
    const ok = (
      await post(owner.key, '/keys', {
        name: 'restricted',
        allowedIps: ['::ffff:192.168.0.0/112', '2001:DB8::/32'],
        allowedOrigins: ['https://APP.example.com/', 'https://*.example.org'],
      })
    ).json();
    expect(ok).toMatchObject({
      allowedIps: ['192.168.0.0/16', '2001:db8::/32'],
      ipRestrictionEnabled: true,
      allowedOrigins: ['https://app.example.com', 'https://*.example.org'],
      originRestrictionEnabled: true,
    });
  });

  it(`allows at most ${MAX_ACTIVE_KEYS} active keys, even when created concurrently`, async () => {
    const owner = await ctx.createAccount(); // holds 1 key
    const responses = await Promise.all(
      Array.from({ length: MAX_ACTIVE_KEYS + 5 }, (_, i) => post(owner.key, '/keys', { name: `k${i}` })),
    );
    const created = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode === 409);
    expect(created).toHaveLength(MAX_ACTIVE_KEYS - 1);
    expect(refused).toHaveLength(6);
    expect(refused[0]?.json()).toEqual({
      error: `An account can hold at most ${MAX_ACTIVE_KEYS} active keys`,
      code: 'MAX_KEYS_EXCEEDED',
      details: { maxKeys: MAX_ACTIVE_KEYS },
      requestId: refused[0]?.headers['x-request-id'],
    });
    // Revoking one frees a place.
    const victim = created[0]?.json().id as string;
    expect(
      (await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${victim}` })).statusCode,
    ).toBe(200);
    expect((await post(owner.key, '/keys', { name: 'again' })).statusCode).toBe(200);
  });
});

describe('DELETE /keys/:keyId', () => {
  it('revokes at once, idempotently; other accounts’ keys are NOT_FOUND', async () => {
    const owner = await ctx.createAccount();
    const other = await ctx.createAccount();
    const victim = (await post(owner.key, '/keys', { name: 'victim' })).json();
    expect((await get(victim.key, '/account')).statusCode).toBe(200);

    const foreign = await ctx.request(other.key, { method: 'DELETE', url: `/api/v1/keys/${victim.id}` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('NOT_FOUND');

    const revoked = await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${victim.id}` });
    expect(revoked.json()).toMatchObject({ id: victim.id, isActive: false, revokedAt: expect.any(String) });
    const again = await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${victim.id}` });
    expect(again.json().revokedAt).toBe(revoked.json().revokedAt);

    const refused = await get(victim.key, '/account');
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('API_KEY_REVOKED');
  });
});

describe('POST /keys/:keyId/rotate', () => {
  let owner: TestAccount;

  beforeAll(async () => {
    owner = await ctx.createAccount();
  });

  it('issues a key with every setting; the old one works for exactly 60 more minutes', async () => {
    const original = (
      await post(owner.key, '/keys', {
        name: 'rotating',
        permissions: ['account', 'price'],
        allowedIps: ['10.0.0.0/8'],
        ipRestrictionEnabled: false,
        allowedOrigins: ['https://app.example.com'],
      })
    ).json();
    const rotatedAt = ctx.clock.now();
    const response = await post(owner.key, `/keys/${original.id}/rotate`);
    expect(response.statusCode).toBe(200);
    const { newKey, oldKey } = response.json();
    expect(newKey).toMatchObject({
      name: 'rotating',
      permissions: ['account', 'price'],
      allowedIps: ['10.0.0.0/8'],
      ipRestrictionEnabled: false,
      allowedOrigins: ['https://app.example.com'],
      originRestrictionEnabled: true,
      rotatedFrom: original.id,
      isActive: true,
      key: expect.stringMatching(/^pk_test_/),
    });
    expect(newKey.key).not.toBe(original.key);
    const graceEnd = new Date(rotatedAt.getTime() + 60 * 60_000);
    expect(oldKey).toMatchObject({
      id: original.id,
      rotatedTo: newKey.id,
      expiresAt: graceEnd.toISOString(),
    });

    ctx.clock.set(new Date(graceEnd.getTime() - 10_000)); // T+59:50
    expect((await get(original.key, '/account')).statusCode).toBe(200);
    expect((await get(newKey.key, '/account')).statusCode).toBe(200);
    ctx.clock.set(graceEnd); // T+60:00 — the grace period is over
    const expired = await get(original.key, '/account');
    expect(expired.statusCode).toBe(401);
    expect(expired.json().code).toBe('API_KEY_EXPIRED');
    ctx.clock.set(new Date(graceEnd.getTime() + 10_000)); // T+60:10
    expect((await get(original.key, '/account')).json().code).toBe('API_KEY_EXPIRED');
    expect((await get(newKey.key, '/account')).statusCode).toBe(200);
  });

  it('a second rotation inside the grace period is KEY_ROTATION_IN_PROGRESS; concurrent rotations issue one key', async () => {
    const original = (await post(owner.key, '/keys', { name: 'twice' })).json();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => post(owner.key, `/keys/${original.id}/rotate`)),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.statusCode === 409);
    expect(refused).toHaveLength(4);
    expect(refused[0]?.json()).toMatchObject({ code: 'KEY_ROTATION_IN_PROGRESS' });
    // The new key can itself be rotated.
    const newId = results.find((r) => r.statusCode === 200)?.json().newKey.id;
    expect((await post(owner.key, `/keys/${newId}/rotate`)).statusCode).toBe(200);
  });

  it('keeps a shorter original expiry, refuses revoked keys, and hides other accounts’ keys', async () => {
    const soon = new Date(ctx.clock.now().getTime() + 10 * 60_000).toISOString();
    const short = (await post(owner.key, '/keys', { name: 'short', expiresAt: soon })).json();
    const rotated = (await post(owner.key, `/keys/${short.id}/rotate`)).json();
    expect(rotated.oldKey.expiresAt).toBe(soon);
    expect(rotated.newKey.expiresAt).toBe(soon);

    const revoked = (await post(owner.key, '/keys', { name: 'gone' })).json();
    await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${revoked.id}` });
    const refused = await post(owner.key, `/keys/${revoked.id}/rotate`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details.problems).toEqual([
      { path: 'path.keyId', message: 'key is revoked and cannot be rotated' },
    ]);

    const stranger = await ctx.createAccount();
    const foreign = await post(stranger.key, `/keys/${short.id}/rotate`);
    expect(foreign.statusCode).toBe(404);
    expect((await post(owner.key, '/keys/key_doesnotexist/rotate')).statusCode).toBe(404);
  });

  it('accepts an empty JSON body', async () => {
    const target = (await post(owner.key, '/keys', { name: 'empty-body' })).json();
    const response = await ctx.request(owner.key, {
      method: 'POST',
      url: `/api/v1/keys/${target.id}/rotate`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('every problem of a key request at once', () => {
  it('an unknown permission, an expiry that does not parse and an allow-list entry with host bits set, in one answer', async () => {
    const owner = await ctx.createAccount();
    const response = await post(owner.key, '/keys', {
      name: 'x',
      permissions: ['price', 'root'],
      expiresAt: 'yesterday',
      allowedIps: ['10.0.0.1/8'],
      allowedOrigins: ['https://app.example.com', 'ftp://x.example.com'],
      quotas: { dailySpendUsd: 'lots' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details.problems).toEqual([
      {
        path: 'body.permissions[1]',
        message: expect.stringMatching(/^must be one of: /),
        allowed: expect.arrayContaining(['price', 'batch']),
      },
      {
        path: 'body.expiresAt',
        message: 'must be an ISO 8601 timestamp with a zone, e.g. 2027-01-31T00:00:00Z',
      },
      { path: 'body.allowedIps[0]', message: '"10.0.0.1/8" has host bits set (did you mean 10.0.0.0/8?)' },
      {
        path: 'body.allowedOrigins[1]',
        message: '"ftp://x.example.com" is not an origin like https://app.example.com',
      },
      {
        path: 'body.quotas.dailySpendUsd',
        message: 'must be a USD amount such as "25.00" (at most 6 decimals)',
      },
    ]);
    // The same on a change of an existing key, for a past expiry.
    const key = (await post(owner.key, '/keys', { name: 'to change' })).json();
    const changed = await ctx.request(owner.key, {
      method: 'PATCH',
      url: `/api/v1/keys/${key.id}`,
      payload: { name: '  ', permissions: ['root'], expiresAt: '2020-01-01T00:00:00Z' },
    });
    expect(
      changed.json().details.problems.map((p: { path: string; message: string }) => [p.path, p.message]),
    ).toEqual([
      ['body.permissions[0]', expect.stringMatching(/^must be one of: /)],
      ['body.name', 'must not be blank'],
      ['body.expiresAt', 'must be in the future'],
    ]);
    // Nothing was created by the refused request.
    expect((await get(owner.key, '/keys')).json().total).toBe(2);
  });
});
