/** Scheduled price checks and AI resolutions: the room's door (the AI resolution port the process builds). */
export { aiJobResolver } from './ai.js';
export type { AiJobResolver } from './ports.js';
