import type { Queryable } from '../db/database.js';
import { hasQuota, type RateLimitPolicy, readUsage } from '../limits/index.js';
import type { ApiKeyRecord } from './rows.js';
import { presentKey } from './schemas.js';

/** Keys as the API and the dashboard answer them, with current usage for those that have a quota. */
export async function presentKeys(
  db: Queryable,
  now: Date,
  defaultRateLimit: RateLimitPolicy,
  records: ApiKeyRecord[],
) {
  const quota = records.filter((k) => hasQuota(k.quotas));
  const usage = await readUsage(db, [...new Set(quota.map((k) => k.lineageId))], now);
  return records.map((k) =>
    presentKey(k, now, {
      defaultRateLimit,
      usage: hasQuota(k.quotas) ? usage.get(k.lineageId) : undefined,
    }),
  );
}
