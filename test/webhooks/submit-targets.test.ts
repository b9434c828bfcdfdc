import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Callback URLs that can never be delivered — a non-public IP literal in any spelling the URL
 * parser accepts, a localhost name, or another special-use name (RFC 6761/6762) — are refused when submitted (VALIDATION_ERROR, nothing
 * charged or stored), unless the deployment allows private targets. DNS names are left to the
 * connect-time check (test/webhooks/ssrf.test.ts).
 */

const UNDELIVERABLE = [
  'https://169.254.169.254/latest/meta-data/',
  'https://127.0.0.1/',
  'https://[::1]/',
  'https://0x7f.1/',
  'https://2130706433/',
  'https://017700000001/',
  'https://127.1:8443/hook',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::8.8.8.8]/',
  'https://10.0.0.1/',
  'https://192.168.1.10/',
  'https://100.64.0.1/',
  'https://0.0.0.0/',
  'https://[fd00::1]/',
  'https://[64:ff9b::a00:1]/',
  'https://localhost/',
  'https://LOCALHOST./x',
  'https://api.localhost/',
  // Special-use names no public resolver answers for (RFC 6761, RFC 6762).
  'https://nonexistent.invalid/',
  'https://Hooks.INVALID./x',
  'https://hooks.test/',
  'https://api.example/',
  'https://printer.local/',
];

let strict: TestContext;
let lenient: TestContext;

beforeAll(async () => {
  strict = await createTestContext();
  lenient = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
});
afterAll(async () => {
  for (const ctx of [strict, lenient]) {
    await expectLedgerReconciles(ctx.database.db);
    await ctx.close();
  }
});

function bodies(ctx: TestContext, callbackUrl: string): [string, Record<string, unknown>][] {
  const inAnHour = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
  const ai = { question: 'Will the upgrade ship?', outcomes: ['Yes', 'No'] };
  return [
    ['/ai/resolve', { ...ai, callbackUrl }],
    ['/price/schedule', { symbol: 'SOL', resolutionTimestamp: inAnHour, callbackUrl }],
    ['/price/scheduled', { symbol: 'SOL', scheduledFor: inAnHour, callbackUrl }],
    ['/ai/schedule', { ...ai, resolutionTimestamp: inAnHour, callbackUrl }],
  ];
}

async function stored(ctx: TestContext, account: TestAccount): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM scheduled_jobs WHERE account_id = $1)
          + (SELECT count(*) FROM ai_requests WHERE account_id = $1)
          + (SELECT count(*) FROM webhook_deliveries WHERE account_id = $1) AS n`,
    [account.accountId],
  );
  return Number(row?.n);
}

describe('callback URLs that can never be delivered', () => {
  it(`are refused at submit on every route that takes one (${UNDELIVERABLE.length} URLs × 4 routes): nothing charged or stored`, async () => {
    const account = await strict.createAccount({ balanceUsd: '10.00' });
    for (const url of UNDELIVERABLE) {
      for (const [route, payload] of bodies(strict, url)) {
        const response = await strict.request(account.key, {
          method: 'POST',
          url: `/api/v1${route}`,
          payload,
        });
        const where = `${route} ${url}`;
        expect({ where, status: response.statusCode }).toEqual({ where, status: 400 });
        const host = new URL(url).hostname;
        expect(response.json()).toEqual({
          error: expect.any(String),
          code: 'VALIDATION_ERROR',
          details: {
            problems: [
              {
                path: 'body.callbackUrl',
                message: expect.stringMatching(
                  new RegExp(
                    `^host ${host.replace(/[.[\]]/g, '\\$&')} (is not a public address|is a localhost name|is a special-use name \\(\\.(invalid|test|example|local), RFC 676[12]: [^)]+\\)): callbacks are only sent to public addresses`,
                  ),
                ),
              },
            ],
          },
          requestId: response.headers['x-request-id'],
        });
      }
    }
    expect(await balanceOf(strict.database.db, account.accountId)).toBe(10_000_000n);
    expect(await countEntries(strict.database.db, account.accountId, 'charge')).toBe(0);
    expect(await stored(strict, account)).toBe(0);
  });

  it('public literals and DNS names (even ones that resolve privately) are accepted at submit', async () => {
    const account = await strict.createAccount({ balanceUsd: '10.00' });
    for (const url of [
      'https://8.8.8.8/hook',
      'https://[2606:4700:4700::1111]/',
      'https://internal.example.com/',
    ]) {
      const [route, payload] = bodies(strict, url)[1] as [string, Record<string, unknown>];
      const response = await strict.request(account.key, { method: 'POST', url: `/api/v1${route}`, payload });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
    }
  });

  it('are accepted when the deployment allows private targets (development), except .invalid', async () => {
    const account = await lenient.createAccount({ balanceUsd: '10.00' });
    for (const url of [
      'https://127.0.0.1:8443/hook',
      'https://localhost/',
      'https://[::1]/',
      // Named on this machine or its network (/etc/hosts, multicast DNS): what development is for.
      'https://app.localhost/',
      'https://hooks.test/',
      'https://api.example/',
      'https://printer.local/',
    ]) {
      for (const [route, payload] of bodies(lenient, url)) {
        const response = await lenient.request(account.key, {
          method: 'POST',
          url: `/api/v1${route}`,
          payload,
        });
        expect({ route, url, status: response.statusCode }).toEqual({ route, url, status: 200 });
      }
    }
    // `.invalid` resolves nowhere, on any machine: refused even then, nothing charged or stored.
    const other = await lenient.createAccount({ balanceUsd: '10.00' });
    for (const [route, payload] of bodies(lenient, 'https://nonexistent.invalid/')) {
      const response = await lenient.request(other.key, { method: 'POST', url: `/api/v1${route}`, payload });
      expect({ route, status: response.statusCode }).toEqual({ route, status: 400 });
      expect(response.json().details).toEqual({
        problems: [
          {
            path: 'body.callbackUrl',
            message:
              'host nonexistent.invalid is a special-use name (.invalid, RFC 6761: it never resolves) (docs/webhooks.md#where-callbacks-may-go)',
          },
        ],
      });
    }
    expect(await balanceOf(lenient.database.db, other.accountId)).toBe(10_000_000n);
    expect(await stored(lenient, other)).toBe(0);
  });
});

describe('plain http:// (docs/webhooks.md#local-development)', () => {
  it('is accepted to loopback hosts only, and only when private targets are allowed', async () => {
    const account = await lenient.createAccount({ balanceUsd: '10.00' });
    for (const url of [
      'http://127.0.0.1:4000/hook',
      'http://localhost:4000/',
      'http://[::1]:4000/',
      'http://127.8.9.1/',
      'http://api.localhost:4000/',
    ]) {
      const [route, payload] = bodies(lenient, url)[1] as [string, Record<string, unknown>];
      const response = await lenient.request(account.key, {
        method: 'POST',
        url: `/api/v1${route}`,
        payload,
      });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
    }
    for (const url of ['http://10.0.0.1/', 'http://hooks.example.com/', 'http://printer.local/']) {
      const [route, payload] = bodies(lenient, url)[1] as [string, Record<string, unknown>];
      const response = await lenient.request(account.key, {
        method: 'POST',
        url: `/api/v1${route}`,
        payload,
      });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().details.problems).toEqual([
        {
          path: 'body.callbackUrl',
          message:
            'must be an https:// URL (or http:// to this machine: localhost, *.localhost, 127.0.0.0/8, [::1])',
        },
      ]);
    }
    const strictAccount = await strict.createAccount({ balanceUsd: '10.00' });
    const [route, payload] = bodies(strict, 'http://127.0.0.1:4000/hook')[1] as [
      string,
      Record<string, unknown>,
    ];
    const refused = await strict.request(strictAccount.key, {
      method: 'POST',
      url: `/api/v1${route}`,
      payload,
    });
    expect(refused.json().details.problems).toEqual([
      { path: 'body.callbackUrl', message: 'must be an https:// URL' },
    ]);
  });
});

describe('with other problems in the body', () => {
  it('a callback URL that can never be delivered is named in the same answer as the schema’s problems', async () => {
    const account = await strict.createAccount({ balanceUsd: '10.00' });
    const response = await strict.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/schedule',
      payload: { symbol: 'SOL', resolutionTimestamp: 42, callbackUrl: 'https://127.0.0.1/' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details.problems.map((p: { path: string }) => p.path)).toEqual([
      'body.resolutionTimestamp',
      'body.callbackUrl',
    ]);
    const ai = await strict.request(account.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: {
        question: 'Q?',
        outcomes: ['Yes', 'No'],
        confidenceThreshold: 2,
        callbackUrl: 'http://x.example/',
      },
    });
    expect(ai.json().details.problems).toEqual([
      expect.objectContaining({ path: 'body.confidenceThreshold' }),
      { path: 'body.callbackUrl', message: 'must be an https:// URL' },
    ]);
  });
});
