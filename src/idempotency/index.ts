/** `Idempotency-Key`: claims, stored answers, their shared parts: the room's door. */
import type { Feature } from '../feature.js';

export { AnswerParts, PARTS_RETENTION_MS, PRUNE_PARTS } from './answer-parts.js';
export { KeyClaimer } from './claims.js';
export {
  classifyHeldKey,
  fingerprint,
  heldKeyAnswer,
  type KeyScope,
  RETENTION_MS,
  type Replay,
  readIdempotencyKey,
  releaseKey,
  storeAnswer,
} from './idempotency.js';
export {
  KEY_TAKEN,
  KeysTakenError,
  type KeyTaken,
  type NewAnswer,
  type PendingAnswer,
  pendingAnswer,
  storeNewAnswers,
} from './pending-answer.js';
export { PRUNE } from './sql.js';

/** Nothing of its own to register: the HTTP edge and the ledger use its verbs. */
export const idempotencyFeature: Feature = { name: 'idempotency' };
