import type { GenerateTextResult, ModelMessage, OutputInterface, ToolSet } from 'ai';
import { addCount, type NativeSearch, WEB_SEARCH } from './grounding.js';

/**
 * Anthropic ends a long search turn early with `stop_reason: "pause_turn"`, which the AI SDK maps
 * to `stop`: `generateText` returns as if the model had finished, its notes cut short. The turn is
 * resumed by sending the paused answer back as it is (docs/ai.md#web-search).
 */
export const PAUSE_TURN = 'pause_turn';

/** A research call's result: text, no answer schema. */
type Result = GenerateTextResult<ToolSet, OutputInterface>;

export interface Resumed {
  /** Every call of the turn, the first one first. */
  results: Result[];
  /** The provider still paused the turn when its searches ran out: the notes are incomplete. */
  paused: boolean;
}

/**
 * One research call, resumed while the provider pauses it: each resend carries the conversation so
 * far and the search tool capped at the searches left of `maxSearches`, so the whole turn makes at
 * most `maxSearches` (a pause counts as at least one, so the resends end). The caller's signal
 * bounds it in time: an aborted resend fails the call.
 */
export async function researchResumed(
  call: (messages: ModelMessage[], tools: ToolSet | undefined) => Promise<Result>,
  user: string,
  tools: ToolSet | undefined,
  search: NativeSearch | undefined,
  maxSearches: number,
): Promise<Resumed> {
  const messages: ModelMessage[] = [{ role: 'user', content: user }];
  const results: Result[] = [];
  let left = maxSearches;
  let callTools = tools;
  for (;;) {
    const result = await call(messages, callTools);
    results.push(result);
    if (result.rawFinishReason !== PAUSE_TURN) return { results, paused: false };
    let used: number | null = 0;
    for (const step of result.steps) used = addCount(used, search?.count(step) ?? null);
    left -= Math.max(1, used ?? 1);
    if (left <= 0 || !search || !callTools?.[WEB_SEARCH]) return { results, paused: true };
    messages.push(...result.response.messages);
    callTools = { ...callTools, [WEB_SEARCH]: search.tool(left) as ToolSet[string] };
  }
}
