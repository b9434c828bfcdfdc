/** Deleting finished work after its period: the room's door (what a room's pruned tables read). */
export type { RetentionSettings } from './config.js';
export { pruneOrder } from './order.js';
export type { RetentionTable } from './tables.js';
