import { randomBytes } from 'node:crypto';
import { type Context, queryable } from '../context.js';
import { AppError } from '../errors.js';
import type { SecretBox } from './secret-box.js';
import * as sql from './sql.js';

/**
 * An account's own signing secret (docs/webhooks.md#verifying), kept in this room's `webhook_secrets`,
 * sealed by the secret box (docs/webhooks.md#secrets-at-rest). Rotation and its overlap are
 * `rotateWebhookSecret` (deliveries.ts); re-sealing is `resealSecrets` (reseal.ts).
 */

/** Standard Webhooks secret format: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new account's secret, sealed, in the caller's transaction: the one that creates the account. */
export async function createWebhookSecret(ctx: Context, box: SecretBox, accountId: string): Promise<void> {
  await queryable(ctx).query(sql.INSERT_SECRET, [accountId, box.seal(newWebhookSecret(), accountId)]);
}

/** The account's current secret in clear (`GET /account`, the operator's `sibyl accounts show`). */
export async function webhookSecretOf(ctx: Context, box: SecretBox, accountId: string): Promise<string> {
  const [row] = await queryable(ctx).query<{ webhook_secret: string }>(sql.SELECT_SECRETS, [accountId]);
  if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return box.open(row.webhook_secret, accountId);
}
