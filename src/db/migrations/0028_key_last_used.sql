-- When each key last authenticated a request, to the minute (docs/api.md#keys, `lastUsedAt`): the
-- API writes it at most once a minute per key and instance, after the request, never in its path
-- (src/keys/last-used.ts). Null: never used. Not an authorisation fact, so no auth_changes row.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
