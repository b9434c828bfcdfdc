import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** Charge coalescing (docs/performance.md) and the ledger's reconciliation schedule. */
export const ledgerSettings = defineSettings(
  {
    RECONCILE_INTERVAL_MS: Type.Integer({ default: 3_600_000, minimum: 1000 }),
    CHARGE_BATCHING: Type.Boolean({ default: true }),
    CHARGE_BATCH_MAX: Type.Integer({ default: 1000, minimum: 1, maximum: 10_000 }),
    CHARGE_BATCH_IN_FLIGHT: Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
  },
  (v) => ({
    reconcileIntervalMs: v.RECONCILE_INTERVAL_MS,
    /** Off = one statement per charge. */
    batching: v.CHARGE_BATCHING,
    maxBatch: v.CHARGE_BATCH_MAX,
    maxInFlight: v.CHARGE_BATCH_IN_FLIGHT,
  }),
);

export type LedgerConfig = ReturnType<typeof ledgerSettings.parse>;
