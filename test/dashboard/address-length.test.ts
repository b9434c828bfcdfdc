import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBase58, encodeBase58 } from '../../src/lib/base58.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { TestWallet } from '../helpers/wallet.js';

/**
 * The dashboard's `address` fields (docs/dashboard.md#your-wallets): a Solana address is base58 that
 * decodes to exactly 32 bytes, as the schema states. A string of the pattern's characters and
 * length that decodes to another length is 400 VALIDATION_ERROR naming the field, on every route
 * that takes one — not a 401 of a signature check, nor a 404.
 */

let ctx: TestContext;
let alice: DashboardClient;

/** 32 to 44 base58 characters that decode to 31, 33 and 24 bytes. */
const WRONG_LENGTH = [
  encodeBase58(new Uint8Array(31).fill(200)),
  encodeBase58(Uint8Array.from([1, ...new Array(32).fill(0)])),
  `2${'1'.repeat(31)}`,
];

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  alice = await DashboardClient.listening(ctx.app);
  await alice.signIn();
});
afterAll(async () => {
  await ctx.close();
});

const output = (address: string) => ({
  output: {
    account: { address },
    signedMessage: Buffer.from('a message').toString('base64'),
    signature: Buffer.alloc(64, 1).toString('base64'),
  },
});

describe('dashboard addresses decode to 32 bytes', () => {
  it('the strings tried match the schema’s pattern and length but decode to another length', () => {
    for (const address of WRONG_LENGTH) {
      expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
      expect(decodeBase58(address)?.length).not.toBe(32);
    }
  });

  it('is stated in the schema of every address field', async () => {
    const doc = (await alice.call('GET', '/api/v1/openapi.json')).text;
    const addresses = [...doc.matchAll(/"address":\{[^}]*\}/g)].map(([text]) => text);
    expect(addresses.length).toBeGreaterThan(0);
    for (const text of addresses) expect(text).toContain('decodes to exactly 32 bytes');
  });

  it('another length is 400 VALIDATION_ERROR naming the field, on every route that takes one', async () => {
    for (const address of WRONG_LENGTH) {
      const cases: [string, string, unknown, string][] = [
        ['POST', '/dashboard/api/auth/challenge', { address }, 'body.address'],
        ['POST', '/dashboard/api/auth/verify', output(address), 'body.output.account.address'],
        ['POST', '/dashboard/api/live/wallets/challenge', { address }, 'body.address'],
        ['POST', '/dashboard/api/live/wallets', output(address), 'body.output.account.address'],
        ['DELETE', `/dashboard/api/live/wallets/${address}`, undefined, 'path.address'],
      ];
      for (const [method, path, body, field] of cases) {
        const answer = await alice.call(method, path, body === undefined ? {} : { body });
        const where = `${method} ${path}`;
        expect({ where, status: answer.status }).toEqual({ where, status: 400 });
        expect(answer.body, where).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { problems: [{ path: field, message: 'must be a base58 Solana address (32 bytes)' }] },
        });
      }
    }
    // A real one still passes the check (and is then not linked: 404).
    const real = new TestWallet().address;
    expect((await alice.call('DELETE', `/dashboard/api/live/wallets/${real}`)).status).toBe(404);
  });
});
