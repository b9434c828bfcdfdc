import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import * as accountSql from '../../src/accounts/sql.js';
import { linkWallet, unlinkWallet } from '../../src/accounts/wallets.js';
import * as walletSql from '../../src/accounts/wallets-sql.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { ManualClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TestWallet } from '../helpers/wallet.js';

/**
 * A wallet belongs to one account (docs/deposits.md#which-wallets-count), across the operator's
 * `accounts create --wallet` and the dashboard's links: the command refuses and names the holder,
 * and the database refuses a second owner whatever the code does (migration 0026). On PGlite or
 * PostgreSQL (TEST_DATABASE_URL), where the races run on separate connections.
 */

let database: TestDatabase;
let db: Database;
const clock = new ManualClock('2026-11-25T12:00:00Z');
const ctx = () => createContext(db, clock);

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => {
  await database.close();
});

const live = async (walletAddress?: string) =>
  (await createAccount(ctx(), { mode: 'live', walletAddress }, clearSecretBox)).id;

async function ownersOf(address: string) {
  const [row] = await db.query<{ sign_in: string[]; linked: string[] }>(
    `SELECT ARRAY(SELECT id FROM accounts WHERE wallet_address = $1 ORDER BY id) AS sign_in,
            ARRAY(SELECT account_id FROM deposit_wallets WHERE address = $1) AS linked`,
    [address],
  );
  return row;
}

describe('sibyl accounts create --wallet', () => {
  it('refuses a wallet another account linked, naming that account, and creates nothing', async () => {
    const holder = await live();
    const wallet = new TestWallet().address;
    await linkWallet(ctx(), { accountId: holder, address: wallet });
    const before = await db.query('SELECT count(*)::int AS n FROM accounts');

    const text = await runCliOn(db, ['accounts', 'create', '--mode', 'live', '--wallet', wallet], {});
    expect(text.status).toBe(1);
    expect(text.stderr).toBe(
      `sibyl: Wallet ${wallet} is linked to account ${holder}: a wallet belongs to one account\n`,
    );
    const json = await runCliOn(
      db,
      ['accounts', 'create', '--mode', 'sandbox', '--wallet', wallet, '--json'],
      {},
    );
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      error: `Wallet ${wallet} is linked to account ${holder}: a wallet belongs to one account`,
      code: 'WALLET_IN_USE',
      details: { wallet, accountId: holder },
    });
    expect(await db.query('SELECT count(*)::int AS n FROM accounts')).toEqual(before);
    expect(await ownersOf(wallet)).toEqual({ sign_in: [], linked: [holder] });
  });

  it('refuses a wallet another account signs in with, and takes a wallet once it is unlinked', async () => {
    const wallet = new TestWallet().address;
    const first = await live(wallet);
    const again = await runCliOn(db, ['accounts', 'create', '--wallet', wallet, '--json'], {});
    expect(JSON.parse(again.stdout)).toMatchObject({
      code: 'WALLET_IN_USE',
      error: `Wallet ${wallet} signs in to account ${first}: a wallet belongs to one account`,
    });

    const freed = new TestWallet().address;
    const linker = await live();
    await linkWallet(ctx(), { accountId: linker, address: freed });
    await unlinkWallet(ctx(), { accountId: linker, address: freed });
    const created = await runCliOn(db, ['accounts', 'create', '--wallet', freed, '--json'], {});
    expect(created.status, created.stdout).toBe(0);
    const id = (JSON.parse(created.stdout) as { id: string }).id;
    expect(await ownersOf(freed)).toEqual({ sign_in: [id], linked: [] });
    // …and now the wallet is that account's: linking it elsewhere is refused.
    await expect(linkWallet(ctx(), { accountId: linker, address: freed })).rejects.toMatchObject({
      code: 'WALLET_IN_USE',
    });
  });
});

describe('the database keeps one owner per wallet', () => {
  it('refuses a second owner written past the code: a link of a sign-in wallet, an account with a linked one', async () => {
    const signIn = new TestWallet().address;
    const owner = await live(signIn);
    const other = await live();
    // The link's own statement, without the verb's checks or lock.
    await expect(db.query(walletSql.LINK_WALLET, [signIn, other, clock.now()])).rejects.toMatchObject({
      code: '23503',
    });
    // A bare insert, as an operator's SQL might: no claim of its own, refused too.
    await expect(
      db.query('INSERT INTO deposit_wallets (address, account_id, linked_at) VALUES ($1, $2, now())', [
        signIn,
        other,
      ]),
    ).rejects.toMatchObject({ code: '23503' });

    const linked = new TestWallet().address;
    await linkWallet(ctx(), { accountId: other, address: linked });
    await expect(
      db.query(accountSql.INSERT_ACCOUNT, ['acct_bypass', 'live', linked, clock.now()]),
    ).rejects.toMatchObject({ code: '23503' });
    await expect(
      db.query(`UPDATE accounts SET wallet_address = $1 WHERE id = $2`, [linked, owner]),
    ).rejects.toMatchObject({
      code: '23503',
    });
    expect(await ownersOf(signIn)).toEqual({ sign_in: [owner], linked: [] });
    expect(await ownersOf(linked)).toEqual({ sign_in: [], linked: [other] });
  });

  it('an account created with a wallet and a link of it, at once: exactly one wins, every round', async () => {
    const linker = await live();
    for (let round = 0; round < 8; round++) {
      const wallet = new TestWallet().address;
      // Started in both orders: on PGlite (one connection) the first started goes first.
      const create = () => createAccount(ctx(), { mode: 'live', walletAddress: wallet }, clearSecretBox);
      const link = () => linkWallet(ctx(), { accountId: linker, address: wallet });
      const results = await Promise.allSettled(round % 2 === 0 ? [create(), link()] : [link(), create()]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'WALLET_IN_USE' });
      }
      const owners = await ownersOf(wallet);
      expect((owners?.sign_in.length ?? 0) + (owners?.linked.length ?? 0)).toBe(1);
    }
  });

  // On PostgreSQL the two statements run on two connections at once: the second waits on the
  // first's key in `wallet_owners` and is refused when the first commits.
  it('the same race past the code (the two statements alone, no lock): the database lets one through', async () => {
    const linker = await live();
    for (let round = 0; round < 8; round++) {
      const wallet = new TestWallet().address;
      const results = await Promise.allSettled([
        db.query(accountSql.INSERT_ACCOUNT, [`acct_race_${round}`, 'live', wallet, clock.now()]),
        db.query(walletSql.LINK_WALLET, [wallet, linker, clock.now()]),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: '23503' });
      const owners = await ownersOf(wallet);
      expect((owners?.sign_in.length ?? 0) + (owners?.linked.length ?? 0)).toBe(1);
    }
  });
});
