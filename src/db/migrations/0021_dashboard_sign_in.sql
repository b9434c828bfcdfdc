-- The dashboard (docs/dashboard.md): Sign-In With Solana challenges, the wallets that signed in
-- with their live and sandbox accounts, and sessions. Nothing here lives in process memory, so a
-- logout on one instance ends the session on every other.

-- A sign-in input the server made (docs/dashboard.md#sign-in-with-solana). The nonce is the key:
-- the signed message names it, and the server verifies the message against the input stored here,
-- never one the client sends. `used_at` is set in the transaction that creates the session, so a
-- nonce signs in once.
CREATE TABLE sign_in_challenges (
  nonce      text PRIMARY KEY,
  input      jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

CREATE INDEX sign_in_challenges_expiry ON sign_in_challenges (expires_at);

-- A wallet that signed in, and the two accounts it reaches: its live account (whose
-- wallet_address is this wallet, unless the operator gave the wallet to a sandbox account) and its
-- sandbox account. One row per wallet, written once, by the first sign-in.
CREATE TABLE dashboard_wallets (
  address            text PRIMARY KEY,
  live_account_id    text NOT NULL UNIQUE REFERENCES accounts (id),
  sandbox_account_id text NOT NULL UNIQUE REFERENCES accounts (id),
  created_at         timestamptz NOT NULL
);

-- A dashboard session: only the SHA-256 of its token is kept. It ends after 12 hours unused
-- (last_seen_at) or 7 days after it began (expires_at), or at logout (the row is deleted).
CREATE TABLE dashboard_sessions (
  id             text PRIMARY KEY,
  token_hash     bytea NOT NULL UNIQUE,
  wallet_address text NOT NULL REFERENCES dashboard_wallets (address),
  created_at     timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL
);

CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
-- Retention finds idle sessions by their last request (src/retention/tables.ts).
CREATE INDEX dashboard_sessions_last_seen ON dashboard_sessions (last_seen_at);
CREATE INDEX dashboard_sessions_wallet ON dashboard_sessions (wallet_address);

-- The account's Solana Pay reference key (docs/deposits.md#who-sent-it-attribution): a random
-- 32-byte public key in base58, shown in the dashboard's payment link so the deposit watcher can
-- attribute a transfer that names it. Drawn the first time the account's funds page is read.
ALTER TABLE accounts ADD COLUMN deposit_reference text UNIQUE;
