-- Account events (docs/webhooks.md#account-events): what happens to an account — a deposit
-- credited, a resolution finished, a key about to expire — recorded once, and sent to each of the
-- account's registered endpoints subscribed to its type.

-- Endpoints registered once (POST /webhooks/endpoints), at most 10 an account, each with its own
-- signing secret (sealed by the secret box with the endpoint id as its authenticated data).
CREATE TABLE webhook_endpoints (
  -- `we_` and 24 base58 characters.
  id                    text PRIMARY KEY,
  account_id            text NOT NULL REFERENCES accounts (id),
  mode                  text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  url                   text NOT NULL,
  -- Catalog names, or the one element '*' (every type).
  event_types           text[] NOT NULL CHECK (cardinality(event_types) > 0),
  description           text,
  enabled               boolean NOT NULL DEFAULT true,
  secret                text NOT NULL,
  -- Rotation: the previous secret signs beside the new one until secret_previous_until.
  secret_previous       text,
  secret_previous_until timestamptz,
  -- Why and when it was last disabled (by its owner, or by its health: docs/webhooks.md#endpoint-health).
  disabled_at           timestamptz,
  disabled_reason       text,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);

CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at, id);

-- The events: one row each, written in the transaction that made the event.
CREATE TABLE account_events (
  -- `evt_` and 24 base58 characters.
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  mode        text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  type        text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  -- An event that must be made at most once (a key's expiry warning): a second insert with the same
  -- key is no event at all.
  once_key    text UNIQUE
);

CREATE INDEX account_events_created ON account_events (created_at);

-- A delivery of an event is a row of the same outbox as the callbacks, with its endpoint and event;
-- its type is the event's type (a catalog name), its request_id the event id.
ALTER TABLE webhook_deliveries ADD COLUMN endpoint_id text;
ALTER TABLE webhook_deliveries ADD COLUMN event_id text;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_type_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_type_check
  CHECK (type IN ('ai', 'price', 'test') OR (endpoint_id IS NOT NULL AND type ~ '^[a-z]+\.[a-z]+$'));

-- An endpoint's deliveries, newest first (GET /webhooks/endpoints/:id/deliveries, its health).
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)
  WHERE endpoint_id IS NOT NULL;
