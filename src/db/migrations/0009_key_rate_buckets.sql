-- The rate-limit bucket a key draws on. A key's own id, unless it was rotated from a key (it keeps
-- that key's bucket) or created by a key with a rate limit of its own (it draws on the creator's):
-- otherwise a rate-capped key could multiply its throughput by minting or rotating keys.
ALTER TABLE api_keys ADD COLUMN rate_limit_bucket text;
-- Keys of one lineage were rotated from one another, or created by a key with a quota: sharing a
-- bucket is at most stricter than before.
UPDATE api_keys SET rate_limit_bucket = lineage_id;
ALTER TABLE api_keys ALTER COLUMN rate_limit_bucket SET NOT NULL;
