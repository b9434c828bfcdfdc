-- Cancelling a delivery (POST /webhooks/deliveries/:id/cancel): a new final status, CANCELLED, and
-- when it was asked for. A PENDING delivery is CANCELLED at once; one SENDING (an attempt in
-- flight) keeps its attempt, which ends it CANCELLED unless that attempt delivered it.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
  CHECK (status IN ('PENDING', 'SENDING', 'DELIVERED', 'STOPPED', 'CALLBACK_FAILED', 'CANCELLED'));
ALTER TABLE webhook_deliveries ADD COLUMN cancelled_at timestamptz;

-- Retention treats a cancelled delivery like any finished one: the partial indexes follow the
-- predicates of the prune statements (src/webhooks/sql.ts).
DROP INDEX webhook_deliveries_finished;
DROP INDEX webhook_deliveries_test_finished;
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at)
  WHERE status IN ('DELIVERED', 'STOPPED', 'CALLBACK_FAILED', 'CANCELLED') AND type <> 'test';
CREATE INDEX webhook_deliveries_test_finished ON webhook_deliveries (finished_at)
  WHERE status IN ('DELIVERED', 'STOPPED', 'CALLBACK_FAILED', 'CANCELLED') AND type = 'test';
