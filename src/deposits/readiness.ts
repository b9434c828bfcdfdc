import { type Context, queryable } from '../context.js';
import type { DepositConfig } from './config.js';
import * as sql from './sql.js';

/** What /readyz says of the deposit watcher (it never makes the service unready). */
export interface DepositReadiness {
  watcher: 'off' | 'on';
  lastPollAt: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  lagSlots: number | null;
}

export async function depositReadiness(ctx: Context, config: DepositConfig): Promise<DepositReadiness> {
  if (config.watch === null) {
    return { watcher: 'off', lastPollAt: null, lastSuccessAt: null, lastError: null, lagSlots: null };
  }
  const [row] = await queryable(ctx).query<{
    last_poll_at: Date | null;
    last_success_at: Date | null;
    last_error: string | null;
    finalized_slot: bigint | number | null;
    processed_slot: bigint | number | null;
  }>(sql.WATCHER_STATE);
  return {
    watcher: 'on',
    lastPollAt: row?.last_poll_at?.toISOString() ?? null,
    lastSuccessAt: row?.last_success_at?.toISOString() ?? null,
    lastError: row?.last_error ?? null,
    lagSlots:
      row?.finalized_slot == null || row.processed_slot == null
        ? null
        : Math.max(0, Number(row.finalized_slot) - Number(row.processed_slot)),
  };
}
