import type { PruneStatement } from '../db/prune.js';

/**
 * One table (or one kind of row in it) that retention prunes, as the worker hands it to the task:
 * rows older than `keepMs` go, at most the retention settings' `batchSize` per statement (the `$2`
 * of `prune`). Each room states its own in its descriptor (`retention` in `<feature>/feature.ts`);
 * the worker collects them from the feature list and puts them in the order of a run (`pruneOrder`). Never the ledger: ledger entries are kept for
 * ever (docs/operations.md#retention, docs/operations.md#the-ledger).
 */
export interface RetentionTable {
  /** For logs and the run's report. */
  name: string;
  /**
   * A batched delete next to its feature's SQL: `$1` the cutoff (rows that ended before it go),
   * `$2` the most rows one statement deletes; returns one row `{ deleted }`. It must read an index
   * range, not the table, and skip rows locked by live work (SKIP LOCKED).
   */
  prune: PruneStatement;
  /** How long a row is kept after it ended. */
  keepMs: number;
}
