import { accountsFeature } from './accounts/feature.js';
import { aiFeature } from './ai/feature.js';
import { attestationsFeature } from './attestations/feature.js';
import { dashboardFeature } from './dashboard/feature.js';
import { depositsFeature } from './deposits/feature.js';
import { evaluationFeature } from './evaluation/feature.js';
import { healthFeature } from './health/feature.js';
import { historicalFeature } from './historical/feature.js';
import { idempotencyFeature } from './idempotency/feature.js';
import { jobsFeature } from './jobs/feature.js';
import { keysFeature } from './keys/feature.js';
import { ledgerFeature } from './ledger/feature.js';
import { limitsFeature } from './limits/feature.js';
import { marketsFeature } from './markets/feature.js';
import { pricesFeature } from './prices/feature.js';
import { retentionFeature } from './retention/feature.js';
import { streamsFeature } from './streams/feature.js';
import { webhooksFeature } from './webhooks/feature.js';

/**
 * Every room's descriptor (src/feature.ts, `<feature>/feature.ts`), in the order their routes are registered — the order of
 * the OpenAPI document's paths — and their queues, tasks and commands are listed. A new feature is
 * one line here.
 */
export const FEATURES = [
  healthFeature,
  accountsFeature,
  ledgerFeature,
  keysFeature,
  pricesFeature,
  historicalFeature,
  jobsFeature,
  marketsFeature,
  aiFeature,
  evaluationFeature,
  webhooksFeature,
  // Before the dashboard: it serves the market stream as a twin (src/dashboard/routes/twins.ts).
  streamsFeature,
  dashboardFeature,
  idempotencyFeature,
  limitsFeature,
  retentionFeature,
  depositsFeature,
  attestationsFeature,
] as const;
