import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** Webhook delivery (docs/webhooks.md). */
export const webhookSettings = defineSettings(
  {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: Type.Optional(Type.Boolean()),
    WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 60_000 }),
    WEBHOOK_CONCURRENCY: Type.Integer({ default: 50, minimum: 1, maximum: 1000 }),
    WEBHOOK_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
    WEBHOOK_TEST_LIMIT_PER_MINUTE: Type.Integer({ default: 10, minimum: 1, maximum: 10_000 }),
    WEBHOOK_ENDPOINT_DISABLE_AFTER: Type.Integer({ default: 5 * 86_400_000, minimum: 60_000 }),
    SECRET_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
    SECRET_ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String({ minLength: 1 })),
  },
  (v) => ({
    /**
     * Development and tests only: lifts the rule that a callback may only reach a public address.
     * HTTPS stays required.
     */
    allowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? false,
    /** Whether WEBHOOK_ALLOW_PRIVATE_TARGETS was set: then local development never overrides it. */
    allowPrivateTargetsSet: v.WEBHOOK_ALLOW_PRIVATE_TARGETS !== undefined,
    /** One attempt, connect to the last byte read. */
    timeoutMs: v.WEBHOOK_TIMEOUT_MS,
    /** Attempts one worker process makes at once. */
    concurrency: v.WEBHOOK_CONCURRENCY,
    /** How long a worker holds a delivery before another may take it over (longer than the timeout). */
    leaseMs: Math.max(v.WEBHOOK_LEASE_MS, v.WEBHOOK_TIMEOUT_MS + 1000),
    /**
     * POST /webhooks/test per account: a bucket of this many, refilled at this many a minute. The
     * route is free and writes a delivery row per call; this keeps it from growing tables for free.
     */
    testLimit: { perSecond: v.WEBHOOK_TEST_LIMIT_PER_MINUTE / 60, burst: v.WEBHOOK_TEST_LIMIT_PER_MINUTE },
    /**
     * Milliseconds: an endpoint whose deliveries have all failed for this long (with at least 20
     * failed) is disabled (docs/webhooks.md#endpoint-health).
     */
    endpointDisableAfterMs: v.WEBHOOK_ENDPOINT_DISABLE_AFTER,
    /** 32 bytes, base64: webhook secrets are stored encrypted with it (AES-256-GCM). */
    encryptionKey: v.SECRET_ENCRYPTION_KEY,
    /** The key before the last rotation of SECRET_ENCRYPTION_KEY: still read, never written. */
    previousEncryptionKey: v.SECRET_ENCRYPTION_KEY_PREVIOUS,
  }),
);

/** At most this much of a receiver's answer is read. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export type WebhookSettings = ReturnType<typeof webhookSettings.parse>;
