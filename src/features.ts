import { accountsFeature } from './accounts/index.js';
import { aiFeature } from './ai/index.js';
import { dashboardFeature } from './dashboard/index.js';
import { depositsFeature } from './deposits/index.js';
import { evaluationFeature } from './evaluation/feature.js';
import { healthFeature } from './health/index.js';
import { historicalFeature } from './historical/index.js';
import { idempotencyFeature } from './idempotency/index.js';
import { jobsFeature } from './jobs/index.js';
import { keysFeature } from './keys/index.js';
import { ledgerFeature } from './ledger/index.js';
import { limitsFeature } from './limits/index.js';
import { marketsFeature } from './markets/index.js';
import { pricesFeature } from './prices/index.js';
import { retentionFeature } from './retention/index.js';
import { streamsFeature } from './streams/feature.js';
import { webhooksFeature } from './webhooks/index.js';

/**
 * Every room of the house (src/feature.ts), in the order their routes are registered — the order of
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
  dashboardFeature,
  idempotencyFeature,
  limitsFeature,
  retentionFeature,
  depositsFeature,
  streamsFeature,
] as const;
