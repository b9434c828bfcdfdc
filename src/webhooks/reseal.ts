import type { Queryable } from '../db/database.js';
import type { SecretBox } from './secret-box.js';

/**
 * Re-seals every account's webhook secrets (current and previous) with the box's current key: after
 * SECRET_ENCRYPTION_KEY is rotated (the old one moved to SECRET_ENCRYPTION_KEY_PREVIOUS), or set for
 * the first time over secrets stored in clear. Each row is updated only if it did not change
 * meanwhile (a rotation racing this is kept; run it again to cover that account).
 */
export async function resealSecrets(
  db: Queryable,
  box: SecretBox,
): Promise<{ accounts: number; resealed: number }> {
  const rows = await db.query<{ id: string; webhook_secret: string; webhook_secret_previous: string | null }>(
    'SELECT account_id AS id, webhook_secret, webhook_secret_previous FROM webhook_secrets ORDER BY account_id',
  );
  let resealed = 0;
  for (const row of rows) {
    const current = box.seal(box.open(row.webhook_secret, row.id), row.id);
    const previous = row.webhook_secret_previous
      ? box.seal(box.open(row.webhook_secret_previous, row.id), row.id)
      : null;
    const updated = await db.query(
      `UPDATE webhook_secrets SET webhook_secret = $2, webhook_secret_previous = $3
        WHERE account_id = $1 AND webhook_secret = $4 AND webhook_secret_previous IS NOT DISTINCT FROM $5
       RETURNING account_id`,
      [row.id, current, previous, row.webhook_secret, row.webhook_secret_previous],
    );
    resealed += updated.length;
  }
  return { accounts: rows.length, resealed };
}
