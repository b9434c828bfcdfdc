import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The scheduled-job workers (docs/jobs.md). */
export const jobSettings = defineSettings(
  {
    JOB_CONCURRENCY: Type.Integer({ default: 100, minimum: 1, maximum: 1000 }),
    JOB_PRICE_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
    JOB_AI_LEASE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
  },
  (v) => ({
    /** Jobs one worker process runs at once. */
    concurrency: v.JOB_CONCURRENCY,
    /** How long a worker holds a price check before another may take it over (its worker died). */
    priceLeaseMs: v.JOB_PRICE_LEASE_MS,
    /** The same for an AI resolution: longer than the models' deadline. */
    aiLeaseMs: v.JOB_AI_LEASE_MS,
  }),
);
