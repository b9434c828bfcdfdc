/** Rate limits' descriptor (src/feature.ts): the access settings; the edge and the keys use its verbs. */
import type { Feature } from '../feature.js';
import { accessSettings } from './config.js';

export const limitsFeature: Feature<{ access: typeof accessSettings }> = {
  name: 'limits',
  tables: ['key_usage'],
  settings: { access: accessSettings },
};
