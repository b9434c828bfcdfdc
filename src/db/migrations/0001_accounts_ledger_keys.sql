-- Accounts, the append-only ledger, API keys. Money is integer micro-USD (1 USD = 1,000,000).

CREATE TABLE accounts (
  id             text PRIMARY KEY,
  mode           text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  wallet_address text UNIQUE,
  -- A cached sum of the account's ledger entries; every change to it inserts the entry in the same
  -- statement. The CHECK is the last line of defence behind the guarded UPDATE of a charge.
  balance_micros bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_balance_non_negative CHECK (balance_micros >= 0),
  -- Needed in clear to compute HMAC signatures of webhook callbacks; never logged.
  webhook_secret text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_entries (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id           text NOT NULL REFERENCES accounts (id),
  kind                 text NOT NULL CHECK (kind IN ('deposit', 'charge', 'refund', 'adjustment')),
  -- Signed: what this entry did to the balance.
  amount_micros        bigint NOT NULL,
  balance_after_micros bigint NOT NULL CHECK (balance_after_micros >= 0),
  -- Deposits: the external reference (e.g. a Solana transaction signature) they are idempotent on.
  reference            text,
  -- Refunds: the charge they give back.
  refund_of            bigint REFERENCES ledger_entries (id),
  -- Charges: what was sold, to which request, through which key.
  operation            text,
  request_id           text,
  key_id               text,
  memo                 text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  CHECK (kind <> 'deposit' OR (amount_micros > 0 AND reference IS NOT NULL)),
  CHECK (kind <> 'charge' OR (amount_micros < 0 AND operation IS NOT NULL)),
  CHECK (kind <> 'refund' OR (amount_micros > 0 AND refund_of IS NOT NULL)),
  CHECK (kind <> 'adjustment' OR amount_micros <> 0)
);

CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id);
-- A deposit reference credits at most once, whichever account it was sent for.
CREATE UNIQUE INDEX ledger_entries_deposit_reference ON ledger_entries (reference) WHERE kind = 'deposit';
-- A charge is refunded at most once.
CREATE UNIQUE INDEX ledger_entries_refund_once ON ledger_entries (refund_of) WHERE kind = 'refund';

-- Entries are immutable: corrections are new entries (adjustments, refunds).
CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only (% refused)', TG_OP;
END
$$;

CREATE TRIGGER ledger_entries_no_update_or_delete
  BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();

CREATE TRIGGER ledger_entries_no_truncate
  BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();

CREATE TABLE api_keys (
  id                         text PRIMARY KEY,
  account_id                 text NOT NULL REFERENCES accounts (id),
  -- SHA-256 of the full key; the key itself is never stored.
  key_hash                   bytea NOT NULL UNIQUE,
  key_prefix                 text NOT NULL,
  name                       text NOT NULL,
  permissions                text[] NOT NULL,
  expires_at                 timestamptz,
  revoked_at                 timestamptz,
  allowed_ips                text[] NOT NULL DEFAULT '{}',
  ip_restriction_enabled     boolean NOT NULL DEFAULT false,
  allowed_origins            text[] NOT NULL DEFAULT '{}',
  origin_restriction_enabled boolean NOT NULL DEFAULT false,
  -- Set on the old key when it is rotated; its expires_at then marks the end of the grace period.
  rotated_to                 text REFERENCES api_keys (id),
  rotated_from               text REFERENCES api_keys (id),
  created_at                 timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

-- Every change that can invalidate a cached key verification (revocation, rotation, account
-- suspension) appends a row here in the same transaction; every API instance polls it, so a
-- revocation takes effect everywhere within the poll interval.
CREATE TABLE auth_changes (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX auth_changes_created ON auth_changes (created_at);
