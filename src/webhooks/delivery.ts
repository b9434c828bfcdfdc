import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import type { Log } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import type { QueueHandler } from '../queue/queue.js';
import {
  type AttemptRecord,
  AttemptRecorder,
  type AttemptStatus,
  recordAttempts,
} from './attempt-recorder.js';
import { checkEndpointHealth } from './endpoint-health.js';
import type { DeliveryStatus } from './outbox.js';
import { RETRY_DELAYS_MS } from './outbox.js';
import type { SecretBox } from './secret-box.js';
import { signedRequest } from './signing.js';
import * as sql from './sql.js';
import type { WebhookOutcome, WebhookTransport } from './transport-port.js';

export interface DeliveryDeps {
  db: Database;
  clock: Clock;
  log: Log;
  transport: WebhookTransport;
  secrets: SecretBox;
  settings: {
    concurrency: number;
    leaseMs: number;
    allowPrivateTargets?: boolean;
    /** WEBHOOK_ENDPOINT_DISABLE_AFTER (docs/webhooks.md#endpoint-health); default 5 days. */
    endpointDisableAfterMs?: number;
  };
}

/** A claimed delivery, with its account's signing secrets as stored. */
export interface ClaimedDelivery {
  id: string;
  account_id: string;
  url: string;
  type: string;
  request_id: string;
  payload: string;
  /** The attempts counted so far, this one included: this attempt's number. */
  attempts: number;
  max_attempts: number;
  lease_token: string;
  /** The registered endpoint an account event goes to; null for a request's callback. */
  endpoint_id?: string | null;
  /** Null only for a delivery whose endpoint was deleted since. */
  webhook_secret: string | null;
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: Date | null;
  /** What the secrets were sealed for: the endpoint, else the account. */
  secret_owner?: string;
}

/**
 * Delivers callbacks: claims due deliveries with a lease (the claim counts the attempt), makes one
 * attempt each outside any transaction, then records it — only while still holding the lease, so an
 * attempt is recorded once even when a lapsed lease let another worker retry it (the receiver then
 * sees the same `webhook-id` twice: at least once, never lost). The outcomes that come back together
 * are recorded together, in one statement (AttemptRecorder). An attempt whose worker was lost
 * counts as a failed one (sql.CLAIM settles it), so a delivery that kills its workers ends
 * CALLBACK_FAILED after its last attempt instead of being sent forever.
 */
export function deliveryQueueHandler(deps: DeliveryDeps): QueueHandler<ClaimedDelivery> {
  const { db, settings } = deps;
  const recorder = new AttemptRecorder(db);
  const record = (attempt: AttemptRecord) => recorder.record(attempt);
  return {
    name: 'webhook-deliveries',
    channel: sql.DELIVERIES_CHANNEL,
    concurrency: settings.concurrency,
    claim: (limit, now) =>
      db.query<ClaimedDelivery>(sql.CLAIM, [now, limit, randomBase62(16), settings.leaseMs, RETRY_DELAYS_MS]),
    process: async (delivery) => {
      await attemptDelivery(deps, delivery, record);
    },
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE);
      return row?.next ?? null;
    },
  };
}

/** What an attempt led to, as `sibyl_webhook_attempts_total` counts it. */
const ATTEMPT_OUTCOME: Record<AttemptStatus, Parameters<typeof metrics.webhookAttempted>[0]> = {
  DELIVERED: 'delivered',
  PENDING: 'retrying',
  STOPPED: 'stopped',
  CALLBACK_FAILED: 'callback_failed',
};

export interface AttemptResult {
  status: DeliveryStatus;
  outcome: WebhookOutcome;
  /** False when the lease was lost meanwhile: another worker owns the delivery now. */
  recorded: boolean;
}

/** Records one attempt; resolves with whether it was recorded (false: the lease was lost). */
export type RecordAttempt = (attempt: AttemptRecord) => Promise<boolean>;

/**
 * One attempt: sign with the account's current secret(s), send, record what came back — through
 * `record` (the worker's: many to a statement), else in a statement of its own.
 */
export async function attemptDelivery(
  deps: DeliveryDeps,
  delivery: ClaimedDelivery,
  record: RecordAttempt = async (attempt) => (await recordAttempts(deps.db, [attempt]))[0] === true,
): Promise<AttemptResult> {
  const { clock, transport } = deps;
  const at = clock.now();
  const secret = delivery.webhook_secret;
  const outcome: WebhookOutcome =
    secret === null
      ? { kind: 'error', code: 'endpoint_deleted', message: 'the endpoint was deleted', latencyMs: 0 }
      : await transport.send({
          url: delivery.url,
          ...signedRequest(
            delivery.id,
            delivery.payload,
            signingSecrets(deps.secrets, { ...delivery, webhook_secret: secret }, at),
            at,
            {
              bodySignature: !delivery.endpoint_id,
            },
          ),
        });
  const now = clock.now();
  // Counted by the claim (or, for a test event, by its insert): this is the attempt's number.
  const attempt = delivery.attempts;
  const { status, dueAt } =
    delivery.webhook_secret === null
      ? { status: 'CALLBACK_FAILED' as const, dueAt: null }
      : nextStep(outcome, attempt, delivery.max_attempts, now);
  const recorded = await record({
    deliveryId: delivery.id,
    leaseToken: delivery.lease_token,
    status,
    dueAt,
    statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
    error: outcome.kind === 'error' ? `${outcome.code}: ${outcome.message}` : null,
    finishedAt: now,
    attemptedAt: at,
    latencyMs: outcome.latencyMs,
  });
  metrics.webhookAttempted(recorded ? ATTEMPT_OUTCOME[status] : 'lease_lost');
  if (!recorded) deps.log.warn({ deliveryId: delivery.id }, 'webhook attempt made after its lease was lost');
  else if (status === 'CALLBACK_FAILED') {
    deps.log.warn(
      { deliveryId: delivery.id, accountId: delivery.account_id, attempts: attempt },
      'webhook delivery failed',
    );
    if (delivery.endpoint_id) await checkEndpointHealth(deps, delivery.endpoint_id);
  }
  return { status, outcome, recorded };
}

/** 2xx delivered; 410 stops; anything else (3xx included) is retried on the schedule until the last attempt. */
export function nextStep(
  outcome: WebhookOutcome,
  attempt: number,
  maxAttempts: number,
  now: Date,
): { status: AttemptStatus; dueAt: Date | null } {
  if (outcome.kind === 'response' && outcome.statusCode >= 200 && outcome.statusCode < 300) {
    return { status: 'DELIVERED', dueAt: null };
  }
  if (outcome.kind === 'response' && outcome.statusCode === 410) return { status: 'STOPPED', dueAt: null };
  if (attempt >= maxAttempts) return { status: 'CALLBACK_FAILED', dueAt: null };
  const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] as number;
  return { status: 'PENDING', dueAt: new Date(now.getTime() + delay) };
}

/** The current secret, then the previous one while it still signs (24 hours after a rotation). */
export function signingSecrets(
  box: SecretBox,
  delivery: Pick<
    ClaimedDelivery,
    'account_id' | 'webhook_secret_previous' | 'webhook_secret_previous_until' | 'secret_owner'
  > & { webhook_secret: string },
  now: Date,
): string[] {
  const owner = delivery.secret_owner ?? delivery.account_id;
  const secrets = [box.open(delivery.webhook_secret, owner)];
  const until = delivery.webhook_secret_previous_until;
  if (delivery.webhook_secret_previous && until && until.getTime() > now.getTime()) {
    secrets.push(box.open(delivery.webhook_secret_previous, owner));
  }
  return secrets;
}
