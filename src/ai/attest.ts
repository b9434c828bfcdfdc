import type { Attestation, Attestations } from '../attestations/index.js';
import type { Queryable } from '../db/database.js';
import type { Consensus } from './consensus.js';
import type { RequestRow } from './requests.js';
import * as sql from './sql.js';
import { MODEL_COUNT } from './types.js';

/**
 * The attestation of a COMPLETED resolution (docs/attestations.md#ai-resolutions): its time is when
 * the last stored answer came, so that the message depends only on what is stored; null when
 * attestations are off.
 */
export async function signResolution(
  db: Queryable,
  attestations: Attestations,
  request: Pick<RequestRow, 'id' | 'mode' | 'question' | 'outcomes' | 'context' | 'market_id'>,
  consensus: Consensus,
): Promise<Attestation | null> {
  const [last] = await db.query<{ at: Date | null }>(sql.LAST_ANSWERED, [request.id]);
  const at = last?.at;
  if (!at) throw new Error(`AI request ${request.id} completed without a stored answer`);
  return attestations.sign({
    kind: 'resolution',
    fields: {
      mode: request.mode,
      requestId: request.id,
      timeMs: at.getTime(),
      question: request.question,
      outcomes: request.outcomes,
      context: request.context,
      marketId: request.market_id,
      winningIndex: consensus.winningOutcomeIndex,
      confidence: consensus.confidence,
      agreeing: Math.round(consensus.agreement * MODEL_COUNT),
      models: consensus.modelsUsed.length,
      canDetermine: consensus.canDetermine,
    },
  });
}
