import { statement } from '../db/database.js';

/** The NOTIFY channel a rotation sends, so that running processes take the new key. */
export const KEYS_CHANNEL = 'attestation_keys';

export const LIST_KEYS = statement(
  'attestation_keys_list',
  `SELECT public_key, mode, created_at, retired_at FROM attestation_keys
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

export const RETIRE_CURRENT = statement(
  'attestation_keys_retire',
  `UPDATE attestation_keys SET retired_at = $1 WHERE retired_at IS NULL RETURNING public_key, mode`,
);

export const NOTIFY_KEYS = `SELECT pg_notify('${KEYS_CHANNEL}', '')`;
