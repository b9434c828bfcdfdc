import { randomBase62 } from '../lib/ids.js';
import { findDelivery } from './delivery-view.js';
import { type CallbackOutbox, validateHttpsCallbackUrl } from './port.js';
import { serialisePayload } from './signing.js';
import * as sql from './sql.js';

export {
  DELIVERY_STATUSES,
  type DeliveryRow,
  type DeliveryStatus,
  type DeliveryView,
  findDelivery,
  presentDelivery,
  presentDeliveryDetail,
} from './delivery-view.js';

/**
 * When attempts are made, after the first (immediate) one: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h. After the eighth failed attempt the delivery is CALLBACK_FAILED.
 */
export const RETRY_DELAYS_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A delivery id is the Standard Webhooks `webhook-id`: `msg_` and 22 random base62 characters. */
export function newDeliveryId(): string {
  return `msg_${randomBase62(22)}`;
}

/**
 * The webhook outbox: a result's callback is a row written in the result's own transaction, with
 * the NOTIFY that wakes the delivery workers; it commits with the result or not at all. A callback
 * URL that could never be delivered (a non-public IP literal, `localhost`) is refused at submit
 * unless the deployment allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS).
 */
export function createWebhookOutbox(targets: { allowPrivateTargets: boolean }): CallbackOutbox {
  return {
    ...webhookOutbox,
    validateCallbackUrl: (url, path) => validateHttpsCallbackUrl(url, path, targets),
  };
}

/** The outbox of a deployment that allows only public targets (the default). */
export const webhookOutbox: CallbackOutbox = {
  validateCallbackUrl: (url, path) => validateHttpsCallbackUrl(url, path, { allowPrivateTargets: false }),
  async enqueueCallback(tx, input) {
    const id = newDeliveryId();
    const now = tx.clock.now();
    const payload = serialisePayload({
      requestId: input.requestId,
      type: input.type,
      status: input.status,
      data: input.data,
      timestamp: now.toISOString(),
    });
    await tx.tx.query(sql.INSERT, [
      id,
      input.accountId,
      input.url,
      input.type,
      input.requestId,
      payload,
      now,
      MAX_ATTEMPTS,
    ]);
    return id;
  },
  deliveryView: (db, deliveryId) => findDelivery(db, deliveryId, null),
};
