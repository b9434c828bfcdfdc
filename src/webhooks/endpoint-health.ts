import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { DISABLE_IF_FAILING } from './endpoints-sql.js';
import { recordAccountEvent } from './events.js';

/** An endpoint is disabled after at least this many failed deliveries in a row (docs/webhooks.md#endpoint-health). */
export const DISABLE_AFTER_FAILURES = 20;
/** WEBHOOK_ENDPOINT_DISABLE_AFTER's default: 5 days. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000;

interface DisabledRow {
  id: string;
  account_id: string;
  mode: 'live' | 'sandbox';
  url: string;
  disabled_reason: string;
  failing_since: Date;
  failed: number;
}

/**
 * Called when a delivery to an endpoint failed for good (CALLBACK_FAILED), and only then: an
 * endpoint whose deliveries have all failed for `endpointDisableAfterMs`, with at least 20 failed,
 * is disabled, and `endpoint.disabled` is recorded for the account's other endpoints in the same
 * transaction (the disabled one, no longer enabled, gets none). Answers whether it disabled it.
 */
export async function checkEndpointHealth(
  deps: { db: Database; clock: Clock; log: Log; settings: { endpointDisableAfterMs?: number } },
  endpointId: string,
): Promise<boolean> {
  const now = deps.clock.now();
  const afterMs = deps.settings.endpointDisableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
  const disabled = await deps.db.transaction(async (tx): Promise<DisabledRow | null> => {
    const [row] = await tx.query<DisabledRow>(DISABLE_IF_FAILING, [
      endpointId,
      now,
      DISABLE_AFTER_FAILURES,
      afterMs,
    ]);
    if (!row) return null;
    await recordAccountEvent(tx, {
      accountId: row.account_id,
      mode: row.mode,
      type: 'endpoint.disabled',
      data: {
        endpointId: row.id,
        url: row.url,
        reason: row.disabled_reason,
        failingSince: row.failing_since.toISOString(),
        failedDeliveries: row.failed,
      },
      at: now,
    });
    return row;
  });
  if (disabled) {
    deps.log.warn(
      { endpointId, accountId: disabled.account_id, failedDeliveries: disabled.failed },
      'webhook endpoint disabled: every delivery failed',
    );
  }
  return disabled !== null;
}
