import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * A callback URL is checked as it was sent, against the documented pattern and `format: uri`
 * (docs/webhooks.md#where-callbacks-may-go): the URL parser alone drops or rewrites what it cannot read
 * (spaces and control characters around the URL, tabs and newlines inside it, a non-ASCII host
 * turned into punycode), and such a URL was accepted and charged. Every route that takes a
 * callbackUrl refuses it with 400 VALIDATION_ERROR, nothing charged or stored; the dashboard's twins too.
 */

const MALFORMED = [
  ' https://hooks.example.com/x',
  'https://hooks.example.com/x ',
  'https://hooks.example.com/a b',
  'https://hooks.exa\tmple.com/x',
  'https://hooks.example.com/x\n',
  '\u0001https://hooks.example.com/x',
  'https://hooks.example.com/\u007f',
  'https://bücher.example/hook',
  'https://hooks.example.com/caf\u00e9',
  'https://hooks.example.com\\x',
  'https://hooks.example.com/%zz',
  'HTTPS://hooks.example.com/x',
  'https:/hooks.example.com/x',
  'https:hooks.example.com/x',
];

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  account = await ctx.createAccount({ balanceUsd: '10.00' });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function bodies(callbackUrl: string): [string, Record<string, unknown>][] {
  const inAnHour = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
  const ai = { question: 'Will the upgrade ship?', outcomes: ['Yes', 'No'] };
  return [
    ['/ai/resolve', { ...ai, callbackUrl }],
    ['/ai/schedule', { ...ai, resolutionTimestamp: inAnHour, callbackUrl }],
    ['/price/schedule', { symbol: 'SOL', resolutionTimestamp: inAnHour, callbackUrl }],
    ['/price/scheduled', { symbol: 'SOL', scheduledFor: inAnHour, callbackUrl }],
    ['/webhooks/test', { callbackUrl }],
  ];
}

async function stored(accountId: string): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM scheduled_jobs WHERE account_id = $1)
          + (SELECT count(*) FROM ai_requests WHERE account_id = $1)
          + (SELECT count(*) FROM webhook_deliveries WHERE account_id = $1) AS n`,
    [accountId],
  );
  return Number(row?.n);
}

const FORM =
  'must be a URI as RFC 3986 writes it: printable ASCII, no spaces or control characters, other ' +
  'characters percent-encoded and an international host in punycode (xn--)';

describe('callback URLs that break the documented form', () => {
  it(`are refused at submit on every route that takes one (${MALFORMED.length} URLs × 5 routes): nothing charged or stored`, async () => {
    for (const url of MALFORMED) {
      for (const [route, payload] of bodies(url)) {
        const response = await ctx.request(account.key, { method: 'POST', url: `/api/v1${route}`, payload });
        const where = `${route} ${JSON.stringify(url)}`;
        expect({ where, status: response.statusCode }).toEqual({ where, status: 400 });
        expect(response.json(), where).toEqual({
          error: expect.any(String),
          code: 'VALIDATION_ERROR',
          details: {
            problems: [
              {
                path: 'body.callbackUrl',
                message: expect.stringMatching(/^must be (a URI as RFC 3986|an https)/),
              },
            ],
          },
          requestId: response.headers['x-request-id'],
        });
      }
    }
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(10_000_000n);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
    expect(await stored(account.accountId)).toBe(0);
  });

  it('names the rule: the characters, or the scheme as written', async () => {
    const problem = async (url: string) =>
      (
        await ctx.request(account.key, {
          method: 'POST',
          url: '/api/v1/webhooks/test',
          payload: { callbackUrl: url },
        })
      ).json().details.problems;
    expect(await problem('https://bücher.example/hook')).toEqual([
      { path: 'body.callbackUrl', message: FORM },
    ]);
    expect(await problem('https://hooks.example.com/x ')).toEqual([
      { path: 'body.callbackUrl', message: FORM },
    ]);
    expect(await problem('HTTPS://hooks.example.com/x')).toEqual([
      { path: 'body.callbackUrl', message: 'must be an https:// URL' },
    ]);
  });

  it('accepts what the form allows: punycode, an IPv6 literal, a port, percent-encoding, a query and a fragment', async () => {
    const other = await ctx.createAccount({ balanceUsd: '10.00' });
    for (const url of [
      'https://xn--bcher-kva.com/hook',
      'https://[2606:4700:4700::1111]:8443/hook',
      'https://hooks.example.com/caf%C3%A9?a=1&b=%20#frag',
      "https://hooks.example.com/a-b_c.d~e!$&'()*+,;=:@/",
    ]) {
      const response = await ctx.request(other.key, {
        method: 'POST',
        url: '/api/v1/price/schedule',
        payload: bodies(url)[2]?.[1],
      });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
    }
  });

  it('are refused by the dashboard’s twin of POST /webhooks/test the same way, nothing stored', async () => {
    const alice = await DashboardClient.listening(ctx.app);
    await alice.signIn();
    for (const url of MALFORMED) {
      const reply = await alice.call('POST', '/dashboard/api/sandbox/webhooks/test', {
        body: { callbackUrl: url },
      });
      expect({ url, status: reply.status }).toEqual({ url, status: 400 });
      expect(reply.body.details, url).toEqual({
        problems: [
          {
            path: 'body.callbackUrl',
            message: expect.stringMatching(/^must be (a URI as RFC 3986|an https)/),
          },
        ],
      });
    }
    const deliveries = await alice.call('GET', '/dashboard/api/sandbox/webhooks/deliveries');
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.deliveries).toEqual([]);
  });
});
