import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { marketCreated, ndjson } from '../markets/events.js';

/**
 * Text the service cannot keep as sent is refused, not repaired: a lone UTF-16 surrogate (which
 * would be stored as U+FFFD) or bytes that are not UTF-8, in an API body or an ingested event; and
 * outcome labels that differ only by invisible or look-alike characters are not distinct. Each case
 * checks over HTTP that nothing was charged or stored.
 */

const TOKEN = 'operator-token-0123456789abcdef';
let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ config: { ADMIN_TOKEN: TOKEN } });
  account = await ctx.createAccount({ balanceUsd: '10.00' });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

/** A raw JSON body, sent byte for byte. */
const send = (url: string, body: string | Buffer) =>
  ctx.request(account.key, {
    method: 'POST',
    url: `/api/v1${url}`,
    payload: body,
    headers: { 'content-type': 'application/json' },
  });

const ingest = (body: string) =>
  ctx.app.inject({
    method: 'POST',
    url: '/api/v1/admin/markets/events',
    payload: body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
  });

async function nothingChargedOrStored(): Promise<void> {
  expect(await balanceOf(ctx.database.db, account.accountId)).toBe(10_000_000n);
  expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  const [row] = await ctx.database.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM ai_requests WHERE account_id = $1)
          + (SELECT count(*) FROM scheduled_jobs WHERE account_id = $1)
          + (SELECT count(*) FROM api_keys WHERE account_id = $1) AS n`,
    [account.accountId],
  );
  expect(Number(row?.n)).toBe(1); // the test's own key
}

const HOOK = 'https://hooks.example.com/sibyl';

describe('ill-formed text in an API body', () => {
  it('a lone surrogate anywhere in the body is VALIDATION_ERROR naming it; nothing charged or stored', async () => {
    const cases: [string, string, string][] = [
      [
        '/ai/resolve',
        `{"question":"a\\ud800b","outcomes":["Yes","No"],"callbackUrl":"${HOOK}"}`,
        'body.question',
      ],
      [
        '/ai/resolve',
        `{"question":"Q?","outcomes":["Yes","N\\udfffo"],"callbackUrl":"${HOOK}"}`,
        'body.outcomes[1]',
      ],
      [
        '/ai/resolve',
        `{"question":"Q?","outcomes":["Yes","No"],"context":"\\udc00","callbackUrl":"${HOOK}"}`,
        'body.context',
      ],
      ['/keys', '{"name":"ops \\ud83d","permissions":["price"]}', 'body.name'],
    ];
    for (const [url, body, path] of cases) {
      const response = await send(url, body);
      expect({ body, status: response.statusCode }).toEqual({ body, status: 400 });
      expect(response.json()).toEqual({
        error: expect.any(String),
        code: 'VALIDATION_ERROR',
        details: {
          problems: [
            {
              path,
              message: 'is not well-formed Unicode (it contains a lone UTF-16 surrogate such as \\ud800)',
            },
          ],
        },
        requestId: response.headers['x-request-id'],
      });
    }
    await nothingChargedOrStored();
  });

  it('bytes that are not UTF-8 (an encoded surrogate, a stray byte) are refused, not read as U+FFFD', async () => {
    for (const bad of [Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff]), Buffer.from([0xc3])]) {
      const body = Buffer.concat([
        Buffer.from('{"question":"a'),
        bad,
        Buffer.from(`b","outcomes":["Yes","No"],"callbackUrl":"${HOOK}"}`),
      ]);
      const response = await send('/ai/resolve', body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { problems: [{ path: 'body', message: 'is not valid UTF-8 text' }] },
      });
    }
    await nothingChargedOrStored();
  });

  it('a well-formed surrogate pair, escaped or not, is accepted and stored as sent', async () => {
    const other = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await ctx.request(other.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: `{"question":"Crab \\ud83e\\udd80 or 🦞?","outcomes":["Yes","No"],"callbackUrl":"${HOOK}"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(200);
    const [row] = await ctx.database.db.query<{ question: string }>(
      'SELECT question FROM ai_requests WHERE id = $1',
      [response.json().requestId],
    );
    expect(row?.question).toBe('Crab 🦀 or 🦞?');
  });
});

describe('ill-formed text in an ingested event', () => {
  it('a lone surrogate in any field refuses the event, by line; nothing stored', async () => {
    const response = await ingest(
      ndjson([
        marketCreated({ id: 'uni-m1', title: 'Will it \ud800 ship?' }, { id: 'uni-e1' }),
        marketCreated({ id: 'uni-m2', outcomes: ['Yes', 'N\udc00o'] }, { id: 'uni-e2' }),
      ]),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      received: 2,
      applied: 0,
      refused: 2,
      reports: [
        {
          line: 1,
          eventId: 'uni-e1',
          reason: 'invalid',
          problems: [
            { path: 'event.market.title', message: expect.stringMatching(/^is not well-formed Unicode/) },
          ],
        },
        {
          line: 2,
          eventId: 'uni-e2',
          reason: 'invalid',
          problems: [
            {
              path: 'event.market.outcomes[1]',
              message: expect.stringMatching(/^is not well-formed Unicode/),
            },
          ],
        },
      ],
    });
    const rows = await ctx.database.db.query("SELECT id FROM markets WHERE id LIKE 'uni-%'");
    expect(rows).toEqual([]);
  });
});

describe('outcome labels that only look different', () => {
  const LOOK_ALIKES: [string, string][] = [
    ['Yes', 'Yes\u200b'], // zero-width space
    ['Yes', '\u2060Yes'], // word joiner
    ['Yes', 'Y\u0435s'], // Cyrillic е
    ['Yes', 'Υes'], // Greek capital upsilon
    ['No', 'Nо'], // Cyrillic о
    ['Paypal', 'PayPaI'], // capital i for l
    ['Yes', 'ｙｅｓ'], // full width
    ['yes', 'YES'],
  ];

  it('are refused by POST /ai/resolve (VALIDATION_ERROR naming the repeat); nothing charged or stored', async () => {
    for (const [first, second] of LOOK_ALIKES) {
      const response = await send(
        '/ai/resolve',
        JSON.stringify({ question: 'Will it ship?', outcomes: [first, 'Other', second], callbackUrl: HOOK }),
      );
      expect({ second, status: response.statusCode }).toEqual({ second, status: 400 });
      expect(response.json().details.problems).toEqual([
        { path: 'body.outcomes[2]', message: 'repeats outcome 0 (labels must be distinct)' },
      ]);
    }
    // Invisible code points alone are a blank label.
    const blank = await send(
      '/ai/resolve',
      JSON.stringify({ question: 'Will it ship?', outcomes: ['Yes', '\u200b\u2060'], callbackUrl: HOOK }),
    );
    expect(blank.json().details.problems).toEqual([
      { path: 'body.outcomes[1]', message: 'must not be blank' },
    ]);
    await nothingChargedOrStored();
  });

  it('are refused by ingestion; labels that merely share letters are not', async () => {
    const response = await ingest(
      ndjson([
        ...LOOK_ALIKES.map(([first, second], i) =>
          marketCreated({ id: `look-${i}`, outcomes: [first, second] }, { id: `look-e${i}` }),
        ),
        marketCreated({ id: 'look-ok', outcomes: ['Yes 🚀', 'Yes ✅'] }, { id: 'look-e-ok' }),
      ]),
    );
    expect(response.json()).toMatchObject({
      received: LOOK_ALIKES.length + 1,
      applied: 1,
      refused: LOOK_ALIKES.length,
    });
    for (const report of response.json().reports) {
      expect(report.problems).toEqual([
        { path: 'event.market.outcomes', message: 'must be distinct labels' },
      ]);
    }
  });
});
