-- A key's compromise (docs/attestations.md#rotation): a routine rotation only retires a key, which
-- still verifies what it signed before `retired_at`; a compromised key verifies nothing, since whoever
-- holds it can sign any message with any time in it.
ALTER TABLE attestation_keys ADD COLUMN compromised_at timestamptz;
ALTER TABLE attestation_keys ADD CONSTRAINT attestation_keys_compromised_retired
  CHECK (compromised_at IS NULL OR retired_at IS NOT NULL);
