import type { AiConfig } from '../ai/index.js';
import type { Feature } from '../feature.js';
import { UsageError } from '../lib/command-line.js';
import type { PriceConfig } from '../prices/index.js';

/**
 * The AI evaluation room's descriptor: `sibyl ai evaluate` (loaded when run) and GET /ai/scorecard
 * (docs/ai.md#evaluation).
 */
export interface Needs {
  config: { ai: AiConfig; prices: PriceConfig };
}

export const evaluationFeature: Feature<Record<never, never>, Needs> = {
  name: 'evaluation',
  tables: ['ai_scorecards'],
  async api(app) {
    const { scorecardRoutes } = await import('./routes.js');
    scorecardRoutes(app);
  },
  commands: {
    ai: {
      usage: [
        '  ai evaluate PATH --models live|sandbox [--limit N] [--concurrency C] [--target 0.97]',
        '              [--out FILE.json] [--cache FILE] [--prices MODEL=IN/OUT,…] [--publish]',
        '              [--search on|off]',
        '                                          measure the AI resolver on a labelled set',
      ],
      async run(io, action, args) {
        if (action !== 'evaluate') throw new UsageError(`unknown action "ai ${action}"`);
        const { evaluateCommand } = await import('./cli.js');
        return evaluateCommand(io, args);
      },
    },
  },
};
