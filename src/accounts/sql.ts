import { statement } from '../db/database.js';

export const INSERT_ACCOUNT = `
  INSERT INTO accounts (id, mode, wallet_address, webhook_secret, created_at)
  VALUES ($1, $2, $3, $4, $5)
  RETURNING id, mode, status, wallet_address, balance_micros, webhook_secret, created_at`;

export const SELECT_ACCOUNT = statement(
  'accounts_select',
  `SELECT id, mode, status, wallet_address, balance_micros, webhook_secret, created_at
     FROM accounts WHERE id = $1`,
);

export const UPDATE_STATUS = `
  UPDATE accounts SET status = $2 WHERE id = $1
  RETURNING id, mode, status, wallet_address, balance_micros, webhook_secret, created_at`;

export const LIST_ACCOUNTS = `
  SELECT id, mode, status, wallet_address, balance_micros, webhook_secret, created_at
    FROM accounts ORDER BY created_at DESC, id DESC LIMIT $1`;

export const RECORD_AUTH_CHANGE = 'INSERT INTO auth_changes (account_id) VALUES ($1)';
