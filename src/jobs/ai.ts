import {
  BODY_PATHS,
  checkQuestion,
  consensusResult,
  DEFAULT_CONFIDENCE_THRESHOLD,
  type Resolver,
  resolutionAnswer,
} from '../ai/index.js';
import { type OutcomeCode, validationError } from '../errors.js';
import type { AiJobResolver } from './ports.js';

/**
 * Scheduled AI jobs through the AI resolution engine: the same limits and models as
 * POST /ai/resolve, the consensus without the request-row lifecycle (the job row is the record).
 */
export function aiJobResolver(resolver: Resolver): AiJobResolver {
  return {
    validate(input, mode) {
      const problems = checkQuestion(
        { question: input.question, outcomes: input.outcomes, context: input.context ?? '' },
        { sandbox: mode === 'sandbox', paths: BODY_PATHS },
      );
      if (problems.length > 0) throw validationError(problems);
    },
    assertAvailable: (mode) => resolver.requireAvailable(mode),
    async resolve(input, mode, requestId) {
      const { votes, consensus } = await resolver.resolve(
        mode,
        { question: input.question, outcomes: input.outcomes, context: input.context ?? '' },
        { confidenceThreshold: input.confidenceThreshold ?? DEFAULT_CONFIDENCE_THRESHOLD },
      );
      if (consensus.status === 'FAILED') {
        return {
          ok: false,
          error: {
            code: 'AI_RESOLUTION_FAILED' satisfies OutcomeCode,
            message: `Only ${consensus.validAnswers} of ${votes.length} models gave a valid answer (3 are needed)`,
          },
        };
      }
      return {
        ok: true,
        result: {
          ...consensusResult(requestId, input.question, consensus),
          votes: votes.map(({ position: _position, ...vote }) => vote),
        },
        answer: resolutionAnswer(consensus, votes),
      };
    },
  };
}
