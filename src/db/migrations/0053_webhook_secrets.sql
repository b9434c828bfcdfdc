-- An account's webhook signing secrets (docs/webhooks.md#verifying) move from columns of
-- `accounts` to a table of the webhooks room, which signs with them, rotates and reseals them: every
-- table one owner (docs/architecture.md#one-owner-per-table). The values move as they are, sealed or
-- in clear (src/webhooks/secret-box.ts): a reseal after this migration reads them here. A rotation's
-- previous secret keeps its overlap.
--
-- Not additive: the columns go, so the previous release fails on the first query that reads them —
-- stop every process before migrating (docs/operations.md#upgrades-and-rollbacks).
CREATE TABLE webhook_secrets (
  account_id                    text PRIMARY KEY REFERENCES accounts (id),
  webhook_secret                text NOT NULL,
  -- Rotation: the previous secret keeps signing (beside the new one) until webhook_secret_previous_until.
  webhook_secret_previous       text,
  webhook_secret_previous_until timestamptz
);

INSERT INTO webhook_secrets (account_id, webhook_secret, webhook_secret_previous, webhook_secret_previous_until)
SELECT id, webhook_secret, webhook_secret_previous, webhook_secret_previous_until FROM accounts;

ALTER TABLE accounts
  DROP COLUMN webhook_secret,
  DROP COLUMN webhook_secret_previous,
  DROP COLUMN webhook_secret_previous_until;
