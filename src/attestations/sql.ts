import { statement } from '../db/database.js';

/** The NOTIFY channel a rotation sends, so that running processes take the new key. */
export const KEYS_CHANNEL = 'attestation_keys';

export const LIST_KEYS = statement(
  'attestation_keys_list',
  `SELECT public_key, mode, created_at, retired_at, compromised_at FROM attestation_keys
   ORDER BY retired_at DESC NULLS FIRST, created_at DESC, mode`,
);

export const CURRENT_KEYS = statement(
  'attestation_keys_current',
  `SELECT public_key, mode, created_at, retired_at FROM attestation_keys WHERE retired_at IS NULL`,
);

/** Lists a key as current unless one is already (a second process starting at once). */
export const INSERT_CURRENT = statement(
  'attestation_keys_insert',
  `INSERT INTO attestation_keys (public_key, mode, created_at) VALUES ($1, $2, $3)
   ON CONFLICT DO NOTHING`,
);

/** Retires the current keys at $1; $2 true: compromised too (nothing they signed verifies any more). */
export const RETIRE_CURRENT = statement(
  'attestation_keys_retire',
  `UPDATE attestation_keys SET retired_at = $1::timestamptz,
          compromised_at = CASE WHEN $2::boolean THEN $1::timestamptz END
    WHERE retired_at IS NULL RETURNING public_key, mode`,
);

/**
 * Marks a retired key ($1) and the other key of its pair (the live and sandbox keys of one secret,
 * listed and retired together) compromised at $2, unless already; the rows it marked.
 */
export const MARK_COMPROMISED = statement(
  'attestation_keys_compromise',
  `UPDATE attestation_keys k SET compromised_at = $2
     FROM attestation_keys named
    WHERE named.public_key = $1 AND named.retired_at IS NOT NULL
      AND k.created_at = named.created_at AND k.retired_at = named.retired_at
      AND k.compromised_at IS NULL
   RETURNING k.public_key, k.mode`,
);

export const NOTIFY_KEYS = `SELECT pg_notify('${KEYS_CHANNEL}', '')`;
