import { statement } from '../db/database.js';

/**
 * The wallet claims (migration 0026, docs/deposits.md#which-wallets-count): a wallet belongs to one
 * account, as its sign-in wallet (`accounts.wallet_address`, `dashboard_wallets`) or as one it linked
 * (`deposit_wallets`), each claim keyed in `wallet_owners`. This room owns all four; the dashboard's
 * sign-in and the deposits' attribution ask its door.
 */

// The key of a wallet's first sign-ins, the operator's accounts with a wallet and the links: all
// queue on it, so the holder one reads is still the holder when it inserts.
export const LOCK_WALLET = `SELECT pg_advisory_xact_lock(hashtextextended('dashboard-wallet:' || $1, 0))`;

/** Who holds wallet $1 already, if anyone: an account it signs in to, or one that linked it. */
export const WALLET_HOLDER = `
  SELECT account_id, claim FROM (
    SELECT id AS account_id, 'sign-in' AS claim FROM accounts WHERE wallet_address = $1
    UNION ALL SELECT live_account_id, 'sign-in' FROM dashboard_wallets WHERE address = $1
    UNION ALL SELECT account_id, 'linked' FROM deposit_wallets WHERE address = $1
  ) holders LIMIT 1`;

/** A wallet that signed in to the dashboard, and its two accounts. */
export const SIGN_IN_WALLET = statement(
  'accounts_sign_in_wallet',
  'SELECT address, live_account_id, sandbox_account_id FROM dashboard_wallets WHERE address = $1',
);

export const ACCOUNT_BY_WALLET = 'SELECT id, mode FROM accounts WHERE wallet_address = $1';

// The sign-in claim in `wallet_owners` was made with the live account (or the operator's): the
// foreign key (migration 0026) refuses a row whose wallet is claimed otherwise.
export const INSERT_SIGN_IN_WALLET = `
  INSERT INTO dashboard_wallets (address, live_account_id, sandbox_account_id, created_at)
  VALUES ($1, $2, $3, $4)`;

/**
 * The live accounts whose wallet each of $1 is: the sign-in wallet (dashboard_wallets' live
 * account, or an account the operator created with --wallet), or a wallet it linked. Sandbox
 * accounts are never funded from the chain, so they are never found.
 */
export const LIVE_WALLET_OWNERS = statement(
  'accounts_live_wallet_owners',
  `SELECT o.address, o.account_id FROM (
       SELECT wallet_address AS address, id AS account_id FROM accounts
        WHERE wallet_address = ANY($1::text[]) AND mode = 'live'
       UNION SELECT address, live_account_id FROM dashboard_wallets WHERE address = ANY($1::text[])
       UNION SELECT address, account_id FROM deposit_wallets WHERE address = ANY($1::text[])
     ) o JOIN accounts a ON a.id = o.account_id AND a.mode = 'live'`,
);

/** The live accounts whose Solana Pay reference key is one of $1. */
export const LIVE_REFERENCE_OWNERS = statement(
  'accounts_live_reference_owners',
  `SELECT deposit_reference AS key, id AS account_id FROM accounts
    WHERE deposit_reference = ANY($1::text[]) AND mode = 'live'`,
);

// Drawn once per account: a concurrent first read keeps whichever reference was stored first.
export const DEPOSIT_REFERENCE = `
  UPDATE accounts SET deposit_reference = COALESCE(deposit_reference, $2) WHERE id = $1
  RETURNING deposit_reference`;

// The account's row, locked: its links are counted against the cap one link at a time.
export const LOCK_ACCOUNT = 'SELECT id, mode FROM accounts WHERE id = $1 FOR UPDATE';

export const COUNT_LINKED = 'SELECT count(*)::integer AS n FROM deposit_wallets WHERE account_id = $1';

// The link's claim on the wallet (migration 0026) goes with it, in the same statement: the wallet
// is free for any account again.
export const UNLINK_WALLET = statement(
  'accounts_unlink_wallet',
  `WITH unlinked AS (
     DELETE FROM deposit_wallets WHERE address = $1 AND account_id = $2 RETURNING address
   )
   DELETE FROM wallet_owners WHERE address = (SELECT address FROM unlinked) AND claim = 'linked'
   RETURNING address`,
);

/** The wallets an account signs in with: its own `wallet_address` (live) and its dashboard wallet. */
export const SIGN_IN_WALLETS = statement(
  'accounts_sign_in_wallets',
  `SELECT wallet_address AS address FROM accounts
    WHERE id = $1 AND mode = 'live' AND wallet_address IS NOT NULL
   UNION SELECT address FROM dashboard_wallets WHERE live_account_id = $1
   ORDER BY address`,
);

// The wallet is claimed as linked in the same statement (migration 0026): when it is a sign-in
// wallet, its `wallet_owners` row says so and the foreign key refuses the link.
export const LINK_WALLET = statement(
  'accounts_link_wallet',
  `WITH claim AS (
     INSERT INTO wallet_owners (address, claim) VALUES ($1, 'linked') ON CONFLICT (address) DO NOTHING
   )
   INSERT INTO deposit_wallets (address, account_id, linked_at) VALUES ($1, $2, $3)
     ON CONFLICT (address) DO NOTHING
   RETURNING account_id`,
);

export const WALLET_LINK = statement(
  'accounts_wallet_link',
  'SELECT account_id, linked_at FROM deposit_wallets WHERE address = $1',
);

export const LINKED_WALLETS = statement(
  'accounts_linked_wallets',
  'SELECT address, linked_at FROM deposit_wallets WHERE account_id = $1 ORDER BY linked_at, address',
);

export const SIGN_IN_OWNER = statement(
  'accounts_sign_in_owner',
  `SELECT id AS account_id FROM accounts WHERE wallet_address = $1
   UNION SELECT live_account_id FROM dashboard_wallets WHERE address = $1
   UNION SELECT sandbox_account_id FROM dashboard_wallets WHERE address = $1`,
);
