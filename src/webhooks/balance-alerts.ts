import type { Context } from '../context.js';
import type { Queryable } from '../db/database.js';
import { type BalanceAlert, emitBalanceAlerts } from '../ledger/index.js';
import type { PeriodicTask } from '../queue/periodic.js';
import { recordAccountEvent } from './events.js';

/** How often the worker turns the ledger's new balance alerts into events. */
export const BALANCE_ALERTS_INTERVAL_MS = 1000;
const BATCH = 100;

/** Records a balance alert's event (`balance.low`, `balance.depleted`) in the transaction given. */
export async function recordBalanceAlert(tx: Queryable, alert: BalanceAlert): Promise<void> {
  const { accountId, mode, createdAt: at } = alert;
  if (alert.type === 'balance.low') {
    await recordAccountEvent(tx, { accountId, mode, type: 'balance.low', data: alert.data, at });
  } else {
    await recordAccountEvent(tx, { accountId, mode, type: 'balance.depleted', data: alert.data, at });
  }
}

/**
 * The balance alerts' events (docs/webhooks.md#balance-alerts): the ledger writes each alert in the
 * statement that crossed the threshold (or refused the request), so that the hot path pays nothing
 * for it; this task records each one's event and deliveries, once, in the transaction that marks the
 * alert done (ledger's emitBalanceAlerts). Several workers may run it: each claims its own alerts.
 */
export function balanceAlertTask(ctx: Context): PeriodicTask {
  return {
    name: 'balance-alert-events',
    intervalMs: BALANCE_ALERTS_INTERVAL_MS,
    async run(_now, signal) {
      while (!signal.aborted && (await emitBalanceAlerts(ctx, recordBalanceAlert, BATCH)) === BATCH) {
        // A full batch: there may be more.
      }
    },
  };
}
