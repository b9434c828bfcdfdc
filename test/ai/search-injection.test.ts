import { afterAll, describe, expect, it } from 'vitest';
import { askModels } from '../../src/ai/ask.js';
import { createLiveModels } from '../../src/ai/providers/registry.js';
import type { ResolutionModel } from '../../src/ai/types.js';
import { ManualClock } from '../../src/lib/clock.js';
import { testConfig } from '../helpers/context.js';
import {
  ANSWER,
  anthropicMessage,
  CITED,
  citedText,
  closeFakes,
  fake,
  INJECTION,
  isAnswerCall,
  KEY,
  now,
  promptWith,
  responsesAnswer,
  responsesMessage,
  searchResult,
  serverToolUse,
} from './search-helpers.js';

/**
 * What a source says is data (docs/ai.md#web-search): a quote that gives instructions is stored as
 * evidence and reaches no later prompt, neither the model's answer call nor another model's.
 */

afterAll(closeFakes);

describe('a quote that gives instructions', () => {
  it('is stored as data, and reaches no later prompt: not the answer call, not the other models', async () => {
    const anthropic = await fake((body) =>
      isAnswerCall(body)
        ? anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }])
        : anthropicMessage(
            [
              serverToolUse,
              searchResult([{ url: CITED, title: INJECTION }]),
              citedText('The crew splashed down on April 10.', [
                { url: CITED, title: INJECTION, quote: INJECTION },
              ]),
            ],
            'end_turn',
            1,
          ),
    );
    const openai = await fake(() =>
      responsesAnswer('openai', [responsesMessage('openai', JSON.stringify(ANSWER), [])]),
    );
    const config = testConfig({
      AI_MODEL_1_PROVIDER: 'anthropic',
      AI_MODEL_1_BASE_URL: `${anthropic.server.url}/v1`,
      AI_MODEL_1_API_KEY: KEY,
      AI_MODEL_2_PROVIDER: 'openai',
      AI_MODEL_2_BASE_URL: `${openai.server.url}/v1`,
      AI_MODEL_2_API_KEY: KEY,
    });
    const models = createLiveModels(config.ai.slots, new ManualClock(now)).models.slice(
      0,
      2,
    ) as ResolutionModel[];
    // The OpenAI model is asked after the Anthropic one has answered, as a later resolution would be.
    const [first] = await askModels(models.slice(0, 1), promptWith(), {
      deadlineMs: 8000,
      retries: 0,
      clock: new ManualClock(now),
    });
    const [second] = await askModels(models.slice(1), promptWith(), {
      deadlineMs: 8000,
      retries: 0,
      clock: new ManualClock(now),
    });
    expect(first?.evidence).toEqual([
      { kind: 'web', url: CITED, title: INJECTION, quote: INJECTION, retrievedAt: now.toISOString() },
    ]);
    expect(first?.outcomeIndex).toBe(0);
    expect(second?.error).toBeNull();
    const [, answerCall] = anthropic.bodies();
    expect(JSON.stringify(answerCall)).not.toContain(INJECTION);
    for (const body of openai.bodies()) expect(JSON.stringify(body)).not.toContain(INJECTION);
  });
});
