import { type Context, queryable } from '../context.js';
import { hasQuota, type RateLimitPolicy, readUsage } from '../limits/index.js';
import type { ApiKeyRecord } from './rows.js';
import { presentKey } from './schemas.js';
import * as sql from './sql.js';

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

/**
 * The names of the account's keys among `ids` (a key of another account, or none, is left out): the
 * usage report by key names them (the ledger's `KeyNames`, handed to it by src/ports.ts).
 */
export async function keyNames(ctx: Context, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await queryable(ctx).query<{ id: string; name: string }>(sql.KEY_NAMES, [accountId, ids]);
  return new Map(rows.map((row) => [row.id, row.name]));
}
