import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The scheduled-job workers (docs/jobs.md). */
export const jobSettings = defineSettings(
  {
    JOB_CONCURRENCY: Type.Integer({ default: 100, minimum: 1, maximum: 1000 }),
    JOB_PRICE_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
    JOB_AI_LEASE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
    JOB_MAX_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 100 }),
    JOB_PRICE_CLAIM_SIZE: Type.Integer({ default: 1000, minimum: 1, maximum: 10_000 }),
    JOB_PRICE_HELD: Type.Integer({ default: 5000, minimum: 1, maximum: 100_000 }),
    // Below the five minutes before its time after which a job cannot be cancelled: a job claimed
    // ahead is never one a cancel could still take (docs/jobs.md#cancelling).
    JOB_CLAIM_AHEAD_MS: Type.Integer({ default: 2000, minimum: 0, maximum: 60_000 }),
  },
  (v) => ({
    /** AI resolutions one worker process runs at once (price checks have a room of their own). */
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
    /** Price checks one claim takes at most (and one batch runs); a full claim is followed by another. */
    priceClaimSize: v.JOB_PRICE_CLAIM_SIZE,
    /** Price checks one worker process holds at most: claimed ahead and waiting, or running. */
    priceHeld: v.JOB_PRICE_HELD,
    /** How long before their time price checks are claimed, to start from in-process timers. */
    claimAheadMs: v.JOB_CLAIM_AHEAD_MS,
  }),
);

export type JobSettings = ReturnType<typeof jobSettings.parse>;
