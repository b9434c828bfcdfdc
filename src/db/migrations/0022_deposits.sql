-- Deposits from the chain (docs/deposits.md): what the deposit watcher saw, where it
-- resumes, and the wallets accounts linked.

-- One transfer to the treasury, by its reference `sol:<signature>:<instruction>` (the same text the
-- ledger credits it under, unique there too). Written at `confirmed` as pending; at `finalized` as
-- credited (with its ledger entry, in the same transaction), unattributed, held or ignored. A
-- pending row whose transaction never finalises is deleted; a final row is never changed, except
-- by the operator's assignment of an unattributed or held one (which credits it).
CREATE TABLE deposits (
  reference       text PRIMARY KEY,
  signature       text NOT NULL,
  instruction     text NOT NULL,
  asset           text NOT NULL CHECK (asset IN ('SOL', 'USDC')),
  -- Base units (lamports; the mint's units for USDC), of `decimals`.
  amount          bigint NOT NULL CHECK (amount >= 0),
  decimals        smallint NOT NULL,
  sender          text,
  slot            bigint NOT NULL,
  block_time      timestamptz,
  status          text NOT NULL CHECK (status IN ('pending', 'credited', 'unattributed', 'held', 'ignored')),
  -- Why held or ignored (usdc_off_peg, no_price, below_minimum), or how it was attributed
  -- (wallet, reference, operator).
  reason          text,
  account_id      text REFERENCES accounts (id),
  -- USD per whole token, as an exact decimal (what was applied), and the value in micro-USD.
  rate            text,
  usd_micros      bigint,
  ledger_entry_id bigint,
  seen_at         timestamptz NOT NULL,
  finalized_at    timestamptz,
  CONSTRAINT deposits_credited_has_entry CHECK ((status = 'credited') = (ledger_entry_id IS NOT NULL))
);

CREATE INDEX deposits_signature ON deposits (signature);
CREATE INDEX deposits_status ON deposits (status, slot);
CREATE INDEX deposits_account ON deposits (account_id, slot DESC) WHERE account_id IS NOT NULL;

-- Where the next scan resumes, per watched address (the treasury wallet and its USDC account): the
-- newest finalized signature processed. Written in the transaction that writes its deposits.
CREATE TABLE deposit_cursors (
  address    text PRIMARY KEY,
  signature  text,
  slot       bigint,
  updated_at timestamptz NOT NULL
);

-- The watcher's last poll, for /readyz, metrics and `sibyl deposits list` (one row).
CREATE TABLE deposit_watcher (
  id              smallint PRIMARY KEY CHECK (id = 1),
  last_poll_at    timestamptz,
  last_success_at timestamptz,
  last_error      text,
  finalized_slot  bigint,
  processed_slot  bigint
);

-- Wallets an account linked by signing with them in the dashboard (docs/dashboard.md#your-wallets).
-- A wallet belongs to one account: the primary key here, and the link refuses a wallet that is
-- another account's sign-in wallet. The account's own sign-in wallet needs no row.
CREATE TABLE deposit_wallets (
  address    text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  linked_at  timestamptz NOT NULL
);

CREATE INDEX deposit_wallets_account ON deposit_wallets (account_id);
