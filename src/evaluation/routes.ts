import type { FastifyInstance } from 'fastify';
import { defineAccountRoute } from '../http/account-route.js';
import { Scorecard } from './schemas.js';
import { latestScorecard } from './scorecard.js';

/**
 * GET /ai/scorecard: the latest AI scorecard published for the caller's mode (a live key's or the
 * dashboard's live page: the live models'), free to any key and in the dashboard.
 */
export function scorecardRoutes(app: FastifyInstance): void {
  defineAccountRoute(app, {
    method: 'GET',
    url: '/ai/scorecard',
    operationId: 'getAiScorecard',
    responseName: 'AiScorecard',
    summary: 'How often the AI resolver is right: the latest published evaluation on a labelled set',
    description:
      'Free, to any key. The summary the operator published with `sibyl ai evaluate --publish` for the ' +
      "key's mode (a live key: an evaluation of the live models; a sandbox key: of the sandbox models): accuracy of " +
      'the determined answers, coverage, accuracy by agreement, by model and by category, calibration of the ' +
      'consensus confidence and the threshold table (docs/ai.md#the-published-scorecard). 404 `NOT_FOUND` until ' +
      'one is published for that mode.',
    tags: ['ai'],
    permission: 'any',
    response: Scorecard,
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, caller }) => latestScorecard(ctx, caller.mode),
  });
}
