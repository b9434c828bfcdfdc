/** Deleting finished work after its period: the room's door. */
import type { Feature } from '../feature.js';
import { retentionSettings } from './config.js';
import { createRetention } from './retention.js';

export const retentionFeature: Feature<{ retention: typeof retentionSettings }> = {
  name: 'retention',
  settings: { retention: retentionSettings },
  worker: ({ config, db, clock, log }) => ({
    tasks: [createRetention({ db, clock, log, settings: config.retention }).task],
  }),
};
