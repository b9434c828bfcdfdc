-- A wallet belongs to one account (docs/deposits.md#which-wallets-count), kept by the database, not
-- only by the code paths that check it under their lock. A wallet is claimed one of two ways: as a
-- sign-in wallet (`accounts.wallet_address`, `dashboard_wallets`: the operator's `accounts create
-- --wallet` or a first sign-in) or as a linked wallet (`deposit_wallets`: the dashboard's link).
-- Every claim references its row here, keyed by the address alone, so one address carries one kind
-- of claim; each kind's own unique key (`accounts.wallet_address`, `deposit_wallets`' primary key)
-- then leaves it one owner. A statement that claims a wallet inserts its row here first
-- (`ON CONFLICT DO NOTHING`); when the address is already claimed the other way, the foreign key
-- refuses the claim, whatever the code around it did, and of two transactions claiming one wallet
-- both ways at once, the second waits on the first's key and is refused when it commits.
CREATE TABLE wallet_owners (
  address text PRIMARY KEY,
  claim   text NOT NULL CHECK (claim IN ('sign-in', 'linked')),
  UNIQUE (address, claim)
);

-- Claims made before this migration that broke the rule (`accounts create --wallet` of a wallet
-- another account had linked: the defect this migration closes): the earlier claim keeps the
-- wallet, the later one is dropped and recorded here for the operator (docs/operations.md#upgrades-and-rollbacks).
-- The deposits they blocked were left unattributed (the watcher never guesses between two owners)
-- and stay so, for `sibyl deposits assign`.
CREATE TABLE wallet_claims_dropped (
  address    text NOT NULL,
  account_id text NOT NULL REFERENCES accounts (id),
  claim      text NOT NULL CHECK (claim IN ('sign-in', 'linked')),
  claimed_at timestamptz NOT NULL,
  kept_by    text NOT NULL REFERENCES accounts (id),
  dropped_at timestamptz NOT NULL DEFAULT now()
);

-- A link of a wallet that signs in to the dashboard (the sign-in's row cannot go: sessions name
-- it), or of a wallet given to an account before it was linked: the link goes.
INSERT INTO wallet_claims_dropped (address, account_id, claim, claimed_at, kept_by)
SELECT l.address, l.account_id, 'linked', l.linked_at, COALESCE(d.live_account_id, a.id)
  FROM deposit_wallets l
  LEFT JOIN dashboard_wallets d ON d.address = l.address
  LEFT JOIN accounts a ON a.wallet_address = l.address
 WHERE d.address IS NOT NULL OR a.created_at <= l.linked_at;

DELETE FROM deposit_wallets l
 WHERE EXISTS (SELECT 1 FROM wallet_claims_dropped x WHERE x.address = l.address AND x.claim = 'linked');

-- A wallet given to an account after another account linked it: the account's claim goes.
INSERT INTO wallet_claims_dropped (address, account_id, claim, claimed_at, kept_by)
SELECT a.wallet_address, a.id, 'sign-in', a.created_at, l.account_id
  FROM accounts a JOIN deposit_wallets l ON l.address = a.wallet_address;

UPDATE accounts a SET wallet_address = NULL
  FROM deposit_wallets l WHERE l.address = a.wallet_address;

INSERT INTO wallet_owners (address, claim)
SELECT wallet_address, 'sign-in' FROM accounts WHERE wallet_address IS NOT NULL
UNION SELECT address, 'sign-in' FROM dashboard_wallets
UNION SELECT address, 'linked' FROM deposit_wallets;

-- Each claiming table says which claim its rows make, in a column that can hold nothing else, so
-- that its foreign key names the claim (a foreign key's columns cannot hold a constant).
ALTER TABLE accounts
  ADD COLUMN wallet_claim text NOT NULL DEFAULT 'sign-in' CHECK (wallet_claim = 'sign-in'),
  ADD CONSTRAINT accounts_wallet_owner FOREIGN KEY (wallet_address, wallet_claim)
    REFERENCES wallet_owners (address, claim);

ALTER TABLE dashboard_wallets
  ADD COLUMN claim text NOT NULL DEFAULT 'sign-in' CHECK (claim = 'sign-in'),
  ADD CONSTRAINT dashboard_wallets_owner FOREIGN KEY (address, claim)
    REFERENCES wallet_owners (address, claim);

ALTER TABLE deposit_wallets
  ADD COLUMN claim text NOT NULL DEFAULT 'linked' CHECK (claim = 'linked'),
  ADD CONSTRAINT deposit_wallets_owner FOREIGN KEY (address, claim)
    REFERENCES wallet_owners (address, claim);
