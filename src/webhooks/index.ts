/** The callback outbox, deliveries, signing, the guarded transport: the room's door. */

export type { WebhookSettings } from './config.js';
export { localDevelopment, localDevelopmentNotice, withPrivateTargets } from './local-development.js';
export { createWebhookOutbox } from './outbox.js';
export { type CallbackOutbox, callbackUrlRule, MAX_CALLBACK_URL_CHARS } from './port.js';
export { Delivery } from './schemas.js';
export { createSecretBox, type SecretBox } from './secret-box.js';
export type { WebhookTransport } from './transport-port.js';
