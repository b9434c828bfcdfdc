import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignedUsd } from '../../src/ledger/adjust-cli.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { probeRoutes } from '../helpers/probe-routes.js';

/** `sibyl accounts adjust ACCOUNT_ID ±USD --reason TEXT` (docs/operations.md#command-line-interface). */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const sibyl = (args: string[]) => runCliOn(ctx.database.db, args, {});

async function json(args: string[]) {
  const out = await sibyl([...args, '--json']);
  return { status: out.status, body: JSON.parse(out.stdout) };
}

describe('sibyl accounts adjust', () => {
  it('parses signed amounts: +, - or none, at most 6 decimals, never zero', () => {
    expect(parseSignedUsd('-25.00')).toBe(-25_000_000n);
    expect(parseSignedUsd('+0.000001')).toBe(1n);
    expect(parseSignedUsd('7')).toBe(7_000_000n);
    for (const bad of ['0', '-0.00', '', '-', '--5', '1.2345678', '5 USD', '-1e3']) {
      expect(parseSignedUsd(bad), bad).toBeNull();
    }
  });

  it('writes an adjustment entry with the reason, either way, and reconciles', async () => {
    const account = await ctx.createAccount({ balanceUsd: '30.00' });
    const taken = await json([
      'accounts',
      'adjust',
      account.accountId,
      '-25.00',
      '--reason',
      'credited twice by mistake',
    ]);
    expect(taken).toEqual({
      status: 0,
      body: {
        accountId: account.accountId,
        amountUsd: '-25.00',
        balanceUsd: '5.00',
        entryId: expect.any(String),
        kind: 'adjustment',
        reason: 'credited twice by mistake',
      },
    });
    const given = await sibyl(['accounts', 'adjust', account.accountId, '+1.5', '--reason', 'goodwill']);
    expect(given.status).toBe(0);
    expect(given.stdout).toContain(`Adjusted ${account.accountId} by +1.50 USD`);
    expect(given.stdout).toContain('balance 6.50 USD');
    const entries = await ctx.database.db.query<{ kind: string; amount_micros: bigint; memo: string }>(
      `SELECT kind, amount_micros, memo FROM ledger_entries WHERE account_id = $1 AND kind = 'adjustment' ORDER BY id`,
      [account.accountId],
    );
    expect(entries).toEqual([
      { kind: 'adjustment', amount_micros: -25_000_000n, memo: 'credited twice by mistake' },
      { kind: 'adjustment', amount_micros: 1_500_000n, memo: 'goodwill' },
    ]);
    // The account's own history shows them, with the reason.
    const history = await json(['accounts', 'transactions', account.accountId, '--kind', 'adjustment']);
    expect(history.body.transactions.map((t: { memo: string }) => t.memo)).toEqual([
      'goodwill',
      'credited twice by mistake',
    ]);
    const reconcile = await sibyl(['ledger', 'reconcile']);
    expect(reconcile.status).toBe(0);
  });

  it('never below zero: refused with the balance named, nothing written', async () => {
    const account = await ctx.createAccount({ balanceUsd: '2.00' });
    const refused = await json(['accounts', 'adjust', account.accountId, '-2.01', '--reason', 'too much']);
    expect(refused.status).toBe(1);
    expect(refused.body).toMatchObject({
      code: 'INSUFFICIENT_BALANCE',
      details: { balanceUsd: '2.00', amountUsd: '-2.01' },
    });
    expect(refused.body.error).toContain('below zero');
    const text = await sibyl(['accounts', 'adjust', account.accountId, '-2.01', '--reason', 'too much']);
    expect(text.stderr).toMatch(
      /^sibyl: Refused: -2\.01 USD would take the balance of acct_\w+ below zero \(it is 2\.00 USD now\); nothing was written\n$/,
    );
    expect(await countEntries(ctx.database.db, account.accountId, 'adjustment')).toBe(0);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(2_000_000n);
    // Down to exactly zero is allowed.
    expect(
      (await json(['accounts', 'adjust', account.accountId, '-2.00', '--reason', 'closing'])).body,
    ).toMatchObject({
      balanceUsd: '0.00',
    });
  });

  it('bad input is a usage error (exit 2) and writes nothing; an unknown account is ACCOUNT_NOT_FOUND', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    for (const args of [
      ['accounts', 'adjust', account.accountId, '-1.00'],
      ['accounts', 'adjust', account.accountId, '-1.00', '--reason', '   '],
      ['accounts', 'adjust', account.accountId, '0', '--reason', 'nothing'],
      ['accounts', 'adjust', account.accountId, 'ten', '--reason', 'words'],
      ['accounts', 'adjust', account.accountId, '--reason', 'no amount'],
      ['accounts', 'adjust', account.accountId, '1.00', '--reason', 'x'.repeat(501)],
    ]) {
      const out = await sibyl(args);
      expect(out.status, args.join(' ')).toBe(2);
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'adjustment')).toBe(0);
    const unknown = await json(['accounts', 'adjust', 'acct_nope', '+1.00', '--reason', 'x']);
    expect(unknown).toMatchObject({ status: 1, body: { code: 'ACCOUNT_NOT_FOUND' } });
  });

  it('concurrent with billed requests: exact balance, never negative, and the ledger reconciles', async () => {
    // 1.00 USD; 60 billed requests of 0.01 and ten adjustments of -0.05 race for it.
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const billed = Array.from({ length: 60 }, () =>
      ctx.request(account.key, { method: 'POST', url: '/api/v1/test/billed', payload: { outcome: 'ok' } }),
    );
    const adjusts = Array.from({ length: 10 }, (_, i) =>
      sibyl(['accounts', 'adjust', account.accountId, '-0.05', '--reason', `race ${i}`]),
    );
    const [responses, outcomes] = await Promise.all([Promise.all(billed), Promise.all(adjusts)]);
    const charged = responses.filter((r) => r.statusCode === 200).length;
    const adjusted = outcomes.filter((o) => o.status === 0).length;
    for (const r of responses) expect([200, 402]).toContain(r.statusCode);
    for (const o of outcomes) expect([0, 1]).toContain(o.status);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charged);
    expect(await countEntries(ctx.database.db, account.accountId, 'adjustment')).toBe(adjusted);
    const balance = await balanceOf(ctx.database.db, account.accountId);
    expect(balance).toBe(1_000_000n - BigInt(charged) * 10_000n - BigInt(adjusted) * 50_000n);
    expect(balance >= 0n).toBe(true);
    // Both together asked for 1.10 of 1.00: something was refused.
    expect(charged * 10_000 + adjusted * 50_000).toBeLessThanOrEqual(1_000_000);
    expect(charged + adjusted).toBeLessThan(70);
    const reconcile = await json(['ledger', 'reconcile']);
    expect(reconcile).toMatchObject({ status: 0, body: { ok: true } });
  });
});
