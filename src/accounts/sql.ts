import { statement } from '../db/database.js';

// A wallet ($3) is claimed as a sign-in wallet in the same statement (migration 0026): when another
// account linked it, its `wallet_owners` row says so and the foreign key refuses the account.
export const INSERT_ACCOUNT = `
  WITH claim AS (
    INSERT INTO wallet_owners (address, claim) SELECT $3, 'sign-in' WHERE $3::text IS NOT NULL
      ON CONFLICT (address) DO NOTHING
  )
  INSERT INTO accounts (id, mode, wallet_address, created_at)
  VALUES ($1, $2, $3, $4)
  RETURNING id, mode, status, wallet_address, balance_micros, created_at`;

export const SELECT_ACCOUNT = statement(
  'accounts_select',
  `SELECT id, mode, status, wallet_address, balance_micros, created_at
     FROM accounts WHERE id = $1`,
);

export const UPDATE_STATUS = `
  UPDATE accounts SET status = $2 WHERE id = $1
  RETURNING id, mode, status, wallet_address, balance_micros, created_at`;

export const LIST_ACCOUNTS = `
  SELECT id, mode, status, wallet_address, balance_micros, created_at
    FROM accounts ORDER BY created_at DESC, id DESC LIMIT $1`;

export const RECORD_AUTH_CHANGE = 'INSERT INTO auth_changes (account_id) VALUES ($1)';
