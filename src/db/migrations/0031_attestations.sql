-- The attestation keys (docs/attestations.md#keys): public keys only, never the secret. One current
-- key per mode (retired_at null); a rotation retires it and lists the next, so that an attestation
-- signed before still verifies against a key listed with its retirement time.
CREATE TABLE attestation_keys (
  public_key text PRIMARY KEY,
  mode text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  created_at timestamptz NOT NULL,
  retired_at timestamptz
);
CREATE UNIQUE INDEX attestation_keys_current ON attestation_keys (mode) WHERE retired_at IS NULL;
