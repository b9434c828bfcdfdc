import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { type Claim, classifyHeldKey, type KeyScope, LOCK_MS } from './idempotency.js';
import * as sql from './sql.js';

interface Pending {
  scope: KeyScope;
  print: string;
  resolve: (claim: Claim) => void;
  reject: (err: unknown) => void;
}

/**
 * Takes idempotency keys for the routes that write in their own transaction (AI resolution,
 * schedules, cancels, webhook tests), before they run; the batch price takes its key with its
 * charge instead (pending-answer.ts). Keys are taken in batches, as the coalescing biller charges:
 * while one claim statement is in flight, the claims that arrive queue up and go together in the
 * next. A keyed request then costs the database a share of one statement instead of a commit of
 * its own (docs/performance.md). Keys that were not taken (replays, conflicts, keys in use) are
 * classified one by one; a second request for a key already in the same batch is in use by the
 * first.
 */
export class KeyClaimer {
  private queue: Pending[] = [];
  private busy = false;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  claim(scope: KeyScope, print: string): Promise<Claim> {
    return new Promise<Claim>((resolve, reject) => {
      this.queue.push({ scope, print, resolve, reject });
      if (!this.busy) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.busy = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.run(batch);
    }
    this.busy = false;
  }

  private async run(batch: Pending[]): Promise<void> {
    const now = this.clock.now();
    const first = new Map<string, Pending>();
    for (const pending of batch) {
      const id = `${pending.scope.accountId}\u0000${pending.scope.key}`;
      if (!first.has(id)) first.set(id, pending);
    }
    const rows = [...first.values()].sort((a, b) =>
      a.scope.accountId === b.scope.accountId
        ? a.scope.key < b.scope.key
          ? -1
          : 1
        : a.scope.accountId < b.scope.accountId
          ? -1
          : 1,
    );
    let held: Set<string>;
    try {
      const taken = await this.db.query<{ request_id: string }>(sql.CLAIM, [
        rows.map((p) => p.scope.accountId),
        rows.map((p) => p.scope.key),
        rows.map((p) => p.print),
        rows.map((p) => p.scope.requestId),
        now,
        LOCK_MS,
      ]);
      held = new Set(taken.map((r) => r.request_id));
    } catch (err) {
      for (const pending of batch) pending.reject(err);
      return;
    }
    await Promise.all(
      batch.map(async (pending) => {
        if (held.has(pending.scope.requestId)) return pending.resolve({ kind: 'held' });
        try {
          pending.resolve(await classifyHeldKey(this.db, pending.scope, pending.print, now));
        } catch (err) {
          pending.reject(err);
        }
      }),
    );
  }
}
