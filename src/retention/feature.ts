/**
 * Retention's descriptor (src/feature.ts): its settings and periodic tasks — pruning, and on the
 * embedded database its planner statistics.
 */
import type { Feature } from '../feature.js';
import { type RetentionSettings, retentionSettings } from './config.js';
import type { RetentionTable } from './tables.js';

export interface Needs {
  config: { retention: RetentionSettings };
  /** Every room's pruned tables, collected by the worker from the feature list. */
  pruned: RetentionTable[];
}

export const retentionFeature: Feature<{ retention: typeof retentionSettings }, Needs> = {
  name: 'retention',
  settings: { retention: retentionSettings },
  async worker({ config, db, clock, log, pruned }) {
    const [{ createRetention }, { embeddedStatisticsTask }] = await Promise.all([
      import('./retention.js'),
      import('./statistics.js'),
    ]);
    const retention = createRetention({ db, clock, log, settings: config.retention, tables: pruned });
    const intervalMs = config.retention.embeddedAnalyzeIntervalMs;
    // PGlite has no autovacuum; PostgreSQL keeps its own statistics.
    const statistics =
      db.kind === 'pglite' && intervalMs > 0 ? [embeddedStatisticsTask({ db, log, intervalMs })] : [];
    return { tasks: [retention.task, ...statistics] };
  },
};
