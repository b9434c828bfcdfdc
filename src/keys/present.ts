import type { Context } from '../context.js';
import { hasQuota, type RateLimitPolicy, readUsage } from '../limits/index.js';
import type { ApiKeyRecord } from './rows.js';
import { presentKey } from './schemas.js';

/** Keys as the API and the dashboard answer them, with current usage for those that have a quota. */
export async function presentKeys(ctx: Context, defaultRateLimit: RateLimitPolicy, records: ApiKeyRecord[]) {
  const now = ctx.clock.now();
  const quota = records.filter((k) => hasQuota(k.quotas));
  const usage = await readUsage(ctx, [...new Set(quota.map((k) => k.lineageId))], now);
  return records.map((k) =>
    presentKey(k, now, {
      defaultRateLimit,
      usage: hasQuota(k.quotas) ? usage.get(k.lineageId) : undefined,
    }),
  );
}
