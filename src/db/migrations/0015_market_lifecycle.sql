-- The market lifecycle worker: OPEN markets past closes_at become CLOSED then RESOLVING, and
-- PRICE_FEED and AI markets are resolved once, automatically. A market is claimed with a lease
-- (FOR UPDATE SKIP LOCKED); `lifecycle_attempted` marks one whose automatic resolution ran and left
-- it RESOLVING for an administrator.
ALTER TABLE markets ADD COLUMN lifecycle_lease_until timestamptz;
ALTER TABLE markets ADD COLUMN lifecycle_lease_token text;
ALTER TABLE markets ADD COLUMN lifecycle_attempted boolean NOT NULL DEFAULT false;

-- What the worker looks for: OPEN markets by closing time, and the (few) CLOSED or RESOLVING ones.
CREATE INDEX markets_lifecycle_open ON markets (closes_at) WHERE status = 'OPEN';
CREATE INDEX markets_lifecycle_pending ON markets (status) WHERE status IN ('CLOSED', 'RESOLVING') AND NOT lifecycle_attempted;
