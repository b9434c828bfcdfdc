import type { AccountMode } from '../accounts/index.js';
import type { Attestation, Attestations, SignedKind } from '../attestations/index.js';
import type { Queryable } from '../db/database.js';
import type { Consensus } from './consensus.js';
import type { RequestRow } from './requests.js';
import * as sql from './sql.js';
import type { Vote } from './types.js';

/**
 * What a resolution's message states of its answer (docs/attestations.md#the-message): the one
 * mapping from a consensus and its votes to the signed fields, whichever kind signs them.
 */
export interface ResolutionAnswer {
  winningIndex: number | null;
  /** 0 to 1 (the message holds basis points). */
  confidence: number;
  /** Votes for the winner. */
  agreeing: number;
  /** Models asked. */
  models: number;
  canDetermine: boolean;
  /** Each vote's `evidence`, in slot order: the message holds its digest. */
  evidence: readonly (readonly unknown[])[];
}

/** The signed answer of a resolution: its consensus, and its votes' evidence in slot order. */
export function resolutionAnswer(
  consensus: Consensus,
  votes: readonly Pick<Vote, 'position' | 'evidence'>[],
): ResolutionAnswer {
  return {
    winningIndex: consensus.winningOutcomeIndex,
    confidence: consensus.confidence,
    agreeing: consensus.agreeing,
    models: consensus.modelsUsed.length,
    canDetermine: consensus.canDetermine,
    evidence: [...votes].sort((a, b) => a.position - b.position).map((vote) => vote.evidence),
  };
}

/** The question a resolution answered, as its message hashes it (context null when none was given). */
export interface SignedQuestion {
  question: string;
  outcomes: readonly string[];
  context: string | null;
}

/**
 * Kind 2, a resolution asked for — `POST /ai/resolve` (with or without a `marketId`) and a
 * scheduled AI job: the request's id, and the market's id when it named one.
 */
export function requestedResolution(
  request: SignedQuestion & { id: string; mode: AccountMode; marketId: string | null },
  answer: ResolutionAnswer,
  timeMs: number,
): SignedKind {
  const { id, mode, question, outcomes, context, marketId } = request;
  return {
    kind: 'resolution',
    fields: { mode, requestId: id, timeMs, question, outcomes, context, marketId, ...answer },
  };
}

/**
 * Kind 3, a market's official resolution, the one its lifecycle records
 * (docs/attestations.md#which-resolution-is-official): its request id is the market's id, so the
 * message's request-id field is the SHA-256 of the market id, fixed before the market resolves;
 * the question is the market's title, outcome labels and description (none when empty), as a
 * `{ marketId }` request asks it.
 */
export function marketResolution(
  market: { id: string; mode: AccountMode; title: string; outcomes: readonly string[]; description: string },
  answer: ResolutionAnswer,
  timeMs: number,
): SignedKind {
  return {
    kind: 'market-resolution',
    fields: {
      mode: market.mode,
      requestId: market.id,
      timeMs,
      question: market.title,
      outcomes: market.outcomes,
      context: market.description === '' ? null : market.description,
      marketId: market.id,
      ...answer,
    },
  };
}

/**
 * The attestation of a COMPLETED resolution (docs/attestations.md#ai-resolutions): its time is when
 * the last stored answer came, and its answer what the stored votes say, so that the message depends
 * only on what is stored; null when attestations are off.
 */
export async function signResolution(
  db: Queryable,
  attestations: Attestations,
  request: Pick<RequestRow, 'id' | 'mode' | 'question' | 'outcomes' | 'context' | 'market_id'>,
  consensus: Consensus,
  stored: readonly Vote[],
): Promise<Attestation | null> {
  const [last] = await db.query<{ at: Date | null }>(sql.LAST_ANSWERED, [request.id]);
  const at = last?.at;
  if (!at) throw new Error(`AI request ${request.id} completed without a stored answer`);
  return attestations.sign(
    requestedResolution(
      { ...request, marketId: request.market_id },
      resolutionAnswer(consensus, stored),
      at.getTime(),
    ),
  );
}
