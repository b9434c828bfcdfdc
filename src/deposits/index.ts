/**
 * Deposits from the chain (docs/deposits.md): the room's door — what the dashboard, the health check
 * and the worker's test doubles use. The watcher, the scan and the operator's verbs stay inside.
 */

export { type DepositConfig, type DepositDisplay, depositDisplay } from './config.js';
export { chainDeposits, type DepositSource } from './funds.js';
export { depositReadiness } from './readiness.js';
export type { DepositWiring } from './wiring.js';
