/** `Idempotency-Key`: claims, stored answers, their shared parts: the room's door. */
export { AnswerParts } from './answer-parts.js';
export { KeyClaimer } from './claims.js';
export {
  classifyHeldKey,
  fingerprint,
  heldKeyAnswer,
  type KeyScope,
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
