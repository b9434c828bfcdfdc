import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The scheduled-job workers (docs/jobs.md). */
export const jobSettings = defineSettings(
  {
    JOB_CONCURRENCY: Type.Integer({ default: 100, minimum: 1, maximum: 1000 }),
    JOB_PRICE_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
    JOB_AI_LEASE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
    JOB_MAX_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 100 }),
  },
  (v) => ({
    /** Jobs one worker process runs at once. */
    concurrency: v.JOB_CONCURRENCY,
    /** How long a worker holds a price check before another may take it over (its worker died). */
    priceLeaseMs: v.JOB_PRICE_LEASE_MS,
    /** The same for an AI resolution: longer than the models' deadline. */
    aiLeaseMs: v.JOB_AI_LEASE_MS,
    /**
     * Runs of one job: every claim counts, whether the run ended in an error or took its worker down
     * with it. A job claimed once more than this fails (refunded once) without being run again.
     */
    maxAttempts: v.JOB_MAX_ATTEMPTS,
  }),
);

export type JobSettings = ReturnType<typeof jobSettings.parse>;
