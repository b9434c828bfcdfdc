/** Retention's descriptor (src/feature.ts): its settings and the periodic task. */
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
    const { createRetention } = await import('./retention.js');
    return { tasks: [createRetention({ db, clock, log, settings: config.retention, tables: pruned }).task] };
  },
};
