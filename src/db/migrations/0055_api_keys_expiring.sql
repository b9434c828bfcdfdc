-- `key.expiring` (docs/webhooks.md#event-catalog): every worker process looks, once a minute, for
-- the keys that expire within the next 7 days (keys/sql.ts EXPIRING). Nothing indexed expires_at, so
-- each look read the whole of api_keys: 300,000 keys, 7,700 pages, 130 ms on PostgreSQL. Only keys
-- with an expiry, neither revoked nor rotated, can be warned about: the index holds those alone (most
-- keys never expire), and a look reads the range of the next 7 days. last_used_at, which every
-- request's key may update, is not in it: those updates stay HOT.
CREATE INDEX api_keys_expiring ON api_keys (expires_at)
  WHERE expires_at IS NOT NULL AND revoked_at IS NULL AND rotated_to IS NULL;
