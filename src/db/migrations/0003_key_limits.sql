-- Per-key rate limits and quotas (issue: key restrictions and limits).

-- Keys descended from one another by rotation share a lineage, so quotas survive rotation.
ALTER TABLE api_keys ADD COLUMN lineage_id text;
UPDATE api_keys SET lineage_id = id;
ALTER TABLE api_keys ALTER COLUMN lineage_id SET NOT NULL;

-- NULL means the service default (rate limit) or unlimited (quotas).
ALTER TABLE api_keys
  ADD COLUMN rate_limit_per_second double precision CHECK (rate_limit_per_second > 0),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst > 0),
  ADD COLUMN quota_daily_requests bigint CHECK (quota_daily_requests >= 0),
  ADD COLUMN quota_monthly_requests bigint CHECK (quota_monthly_requests >= 0),
  ADD COLUMN quota_daily_spend_micros bigint CHECK (quota_daily_spend_micros >= 0),
  ADD COLUMN quota_monthly_spend_micros bigint CHECK (quota_monthly_spend_micros >= 0);

-- Billed requests and spend per key lineage and UTC calendar period, kept for keys with a quota.
-- The guarded upsert that raises a counter is in the same transaction as the charge.
CREATE TABLE key_usage (
  lineage_id   text NOT NULL,
  period       text NOT NULL CHECK (period IN ('day', 'month')),
  period_start date NOT NULL,
  requests     bigint NOT NULL CHECK (requests >= 0),
  spend_micros bigint NOT NULL CHECK (spend_micros >= 0),
  PRIMARY KEY (lineage_id, period, period_start)
);
