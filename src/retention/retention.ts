import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import type { Log } from '../logger.js';
import { TaskLease } from '../queue/lease.js';
import type { PeriodicTask } from '../queue/periodic.js';
import type { RetentionSettings } from './config.js';
import { type RetentionTable, retentionTables } from './tables.js';

export interface RetentionDeps {
  db: Database;
  clock: Clock;
  log: Log;
  settings: RetentionSettings;
  /** What is pruned; default: every table of tables.ts. */
  tables?: RetentionTable[];
}

/** Rows deleted per table by one run. */
export type RetentionReport = Record<string, number>;

export interface Retention {
  /** The periodic task every worker process runs; one run at a time across them (a lease). */
  task: PeriodicTask;
  /**
   * One run at `now`: each table's rows older than its period go, in batches, while this process
   * holds the lease and until `signal` is aborted. Null when another worker holds it (that one is
   * pruning).
   */
  run(now: Date, signal?: AbortSignal): Promise<RetentionReport | null>;
}

const LEASE = 'retention';

/**
 * Retention (docs/operations.md#retention): deletes finished work after its period, so that nothing grows without
 * bound. Deletes are small batched statements (`batchSize` rows, an index range each, with a pause
 * between full batches), so that a backlog — the first run on an old database — is worked off
 * without long locks or a long transaction. One worker at a time: the lease is taken for one
 * interval and renewed after each batch; the other workers' runs meanwhile find it held and skip.
 */
export function createRetention(deps: RetentionDeps): Retention {
  const { db, clock, log, settings } = deps;
  const tables = deps.tables ?? retentionTables(settings);
  const lease = new TaskLease(db, LEASE, `${process.pid}-${randomBase62(8)}`);
  const holdUntil = (at: Date) => new Date(at.getTime() + settings.intervalMs);

  async function run(now: Date, signal?: AbortSignal): Promise<RetentionReport | null> {
    if (!(await lease.acquire(now, holdUntil(now)))) return null;
    const report: RetentionReport = {};
    for (const table of tables) {
      const cutoff = new Date(now.getTime() - table.keepMs);
      let deleted = 0;
      for (;;) {
        const [row] = await db.query<{ deleted: bigint | number }>(table.prune, [cutoff, settings.batchSize]);
        const batch = Number(row?.deleted ?? 0);
        deleted += batch;
        if (batch < settings.batchSize) break;
        if (settings.batchPauseMs > 0) await new Promise((r) => setTimeout(r, settings.batchPauseMs));
        const at = clock.now();
        const stop = signal?.aborted
          ? 'the process is stopping'
          : (await lease.acquire(at, holdUntil(at)))
            ? null
            : 'the lease was taken over'; // held past its interval by a stalled run
        if (stop) {
          // What is left is pruned by the next run, here or in another worker.
          log.warn({ task: LEASE, table: table.name, deleted }, `retention run stopped: ${stop}`);
          report[table.name] = deleted;
          return report;
        }
      }
      report[table.name] = deleted;
    }
    const total = Object.values(report).reduce((sum, n) => sum + n, 0);
    if (total > 0) log.info({ task: LEASE, deleted: report }, 'retention pruned finished work');
    return report;
  }

  return {
    task: {
      name: LEASE,
      intervalMs: settings.intervalMs,
      run: async (now, signal) => void (await run(now, signal)),
    },
    run,
  };
}
