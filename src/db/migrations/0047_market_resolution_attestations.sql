-- A market's official resolution (docs/attestations.md#which-resolution-is-official): the lifecycle
-- that resolves an AI market signs its resolution as a market resolution (kind 3) and keeps the
-- attestation here, with the votes whose evidence the message hashes. One row per market;
-- resolution_event is the market's resolution_event it signed, so that a later resolution of the
-- market by another hand (the platform's newer event) is never shown with this attestation.

CREATE TABLE market_resolution_attestations (
  market_id text PRIMARY KEY REFERENCES markets (id) ON DELETE CASCADE,
  resolution_event text NOT NULL,
  attestation jsonb NOT NULL,
  votes jsonb NOT NULL CHECK (jsonb_typeof(votes) = 'array'),
  created_at timestamptz NOT NULL DEFAULT now()
);
