import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Retention (docs/operations.md#retention): how long finished work is kept; and how often the embedded
 * database is vacuumed and analyzed.
 */
export const retentionSettings = defineSettings(
  {
    RETENTION_WEBHOOK_DELIVERIES_DAYS: Type.Integer({ default: 30, minimum: 1 }),
    RETENTION_TEST_DELIVERIES_HOURS: Type.Integer({ default: 24, minimum: 1 }),
    RETENTION_AI_REQUESTS_DAYS: Type.Integer({ default: 90, minimum: 1 }),
    RETENTION_JOBS_DAYS: Type.Integer({ default: 90, minimum: 1 }),
    RETENTION_MARKET_EVENTS_DAYS: Type.Integer({ default: 30, minimum: 1 }),
    RETENTION_SIGN_INS_HOURS: Type.Integer({ default: 24, minimum: 1 }),
    RETENTION_INTERVAL_MS: Type.Integer({ default: 15 * 60_000, minimum: 1000 }),
    RETENTION_BATCH_SIZE: Type.Integer({ default: 1000, minimum: 1, maximum: 100_000 }),
    RETENTION_BATCH_PAUSE_MS: Type.Integer({ default: 100, minimum: 0, maximum: 60_000 }),
    EMBEDDED_ANALYZE_INTERVAL_MS: Type.Integer({ default: 5 * 60_000, minimum: 0 }),
  },
  (v) => ({
    /** Finished callback deliveries (`ai`, `price`) and their attempts. */
    webhookDeliveriesMs: v.RETENTION_WEBHOOK_DELIVERIES_DAYS * DAY_MS,
    /** Finished test events of POST /webhooks/test. */
    testDeliveriesMs: v.RETENTION_TEST_DELIVERIES_HOURS * HOUR_MS,
    /** Finished AI requests and their votes. */
    aiRequestsMs: v.RETENTION_AI_REQUESTS_DAYS * DAY_MS,
    /** Finished and cancelled scheduled jobs. */
    jobsMs: v.RETENTION_JOBS_DAYS * DAY_MS,
    /** Recorded market event ids (applied events). */
    marketEventsMs: v.RETENTION_MARKET_EVENTS_DAYS * DAY_MS,
    /** Dashboard sessions and sign-in challenges, after they end. */
    signInsMs: v.RETENTION_SIGN_INS_HOURS * HOUR_MS,
    /** How often a worker looks; one run at a time across the workers (a lease). */
    intervalMs: v.RETENTION_INTERVAL_MS,
    /** Rows one delete statement removes at most: short statements, short locks. */
    batchSize: v.RETENTION_BATCH_SIZE,
    /** The pause between two full batches, so a backlog is worked off without hogging the database. */
    batchPauseMs: v.RETENTION_BATCH_PAUSE_MS,
    /**
     * How often the embedded database's worker vacuums the tables that need it and analyzes those
     * grown since their last ANALYZE (docs/operations.md#embedded-statistics); 0: never. PostgreSQL's
     * autovacuum does both there.
     */
    embeddedAnalyzeIntervalMs: v.EMBEDDED_ANALYZE_INTERVAL_MS,
  }),
);

export type RetentionSettings = ReturnType<typeof retentionSettings.parse>;
