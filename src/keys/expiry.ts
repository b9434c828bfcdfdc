import { createContext, withTransaction } from '../context.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { PeriodicTask } from '../queue/periodic.js';
import { recordAccountEvent } from '../webhooks/index.js';
import * as sql from './sql.js';

const DAY_MS = 86_400_000;

/**
 * `key.expiring` (docs/webhooks.md#event-catalog): 7 days before a key's `expiresAt`, then 1 day
 * before, each once. Every worker process runs the task; each warning is an event with a once-key
 * (`key.expiring:<key id>:<7|1>`), so however many processes find the same key, and however often,
 * exactly one event is made per warning (the second insert of a once-key makes none). A key found
 * inside its last day gets the 1-day warning only; one made with less than 7 days left gets the
 * first warning at once, its `daysLeft` the whole days it has left.
 */
export function keyExpiryTask(deps: { db: Database; clock: Clock }, intervalMs = 60_000): PeriodicTask {
  return {
    name: 'key-expiry-warnings',
    intervalMs,
    run: async (now) => {
      await warnExpiringKeys(deps, now);
    },
  };
}

export async function warnExpiringKeys(deps: { db: Database; clock: Clock }, now: Date): Promise<number> {
  const keys = await deps.db.query<{
    id: string;
    account_id: string;
    mode: 'live' | 'sandbox';
    name: string | null;
    expires_at: Date;
  }>(sql.EXPIRING, [now, new Date(now.getTime() + 7 * DAY_MS)]);
  let made = 0;
  for (const key of keys) {
    const left = key.expires_at.getTime() - now.getTime();
    const warning = left <= DAY_MS ? 1 : 7;
    const recorded = await withTransaction(createContext(deps.db, deps.clock), (tx) =>
      recordAccountEvent(tx.tx, {
        accountId: key.account_id,
        mode: key.mode,
        type: 'key.expiring',
        data: {
          keyId: key.id,
          name: key.name,
          expiresAt: key.expires_at.toISOString(),
          daysLeft: warning === 1 ? 1 : Math.min(7, Math.ceil(left / DAY_MS)),
        },
        at: now,
        once: `key.expiring:${key.id}:${warning}`,
      }),
    );
    if (recorded) made += 1;
  }
  return made;
}
