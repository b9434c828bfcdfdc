/** The callback outbox, deliveries, signing, the guarded transport: the room's door. */

export { createWebhookSecret, webhookSecretOf } from './account-secret.js';
export type { WebhookSettings } from './config.js';
export { localDevelopment, localDevelopmentNotice, withPrivateTargets } from './local-development.js';
export { createWebhookOutbox } from './outbox.js';
export { type CallbackOutbox, callbackUrlRule, MAX_CALLBACK_URL_CHARS } from './port.js';
export { Delivery } from './schemas.js';
export { createSecretBox, type SecretBox } from './secret-box.js';
export type { WebhookTransport } from './transport-port.js';

/**
 * The guarded HTTPS transport of the configuration, for `createPorts` (src/ports.ts): loaded on
 * demand, since it brings an HTTP agent (`undici`) that an operator command importing this door
 * (`accounts` for its secret box) does not need (docs/architecture.md#light-commands).
 */
export async function loadTransport(settings: { allowPrivateTargets: boolean; timeoutMs: number }) {
  const { createTransport } = await import('./transport.js');
  return createTransport(settings);
}

/** Account events (docs/webhooks.md#account-events): recorded in the caller's transaction. */
export { type ManyEventsInput, newEventId, recordAccountEvent, recordAccountEvents } from './events.js';
export { eventsOf } from './events-sql.js';
