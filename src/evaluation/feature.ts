/** AI evaluation's descriptor (src/feature.ts): nothing registered yet (its command and route come with it). */
import type { Feature } from '../feature.js';

export const evaluationFeature: Feature = { name: 'evaluation' };
