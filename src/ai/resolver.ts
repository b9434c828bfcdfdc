import type { ToolSet } from 'ai';
import type { AccountMode } from '../accounts/index.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { askModels } from './ask.js';
import type { AiConfig } from './config.js';
import { type Consensus, decideConsensus } from './consensus.js';
import { buildPrompt } from './prompt.js';
import { createLiveModels, type SlotStatus } from './providers/registry.js';
import { createSandboxModels } from './sandbox.js';
import type { SibylData } from './tools/port.js';
import { sharedReads } from './tools/shared-reads.js';
import { createSibylTools } from './tools/sibyl-tools.js';
import {
  MODEL_COUNT,
  ModelError,
  type ResolutionModel,
  type ResolutionQuestion,
  type Vote,
} from './types.js';

export interface Resolution {
  /** The four models' votes, in slot order. */
  votes: Vote[];
  consensus: Consensus;
}

export interface ResolveOptions {
  /** 0 to 1; a winner below it is reported with `canDetermine: false`. */
  confidenceThreshold: number;
  /** Answers already stored (a resumed resolution): those models are not asked again. */
  known?: ReadonlyMap<number, Vote>;
  /** Called with each vote as it arrives, e.g. to store it before the others finish. */
  onVote?: (vote: Vote) => Promise<void>;
  /** False: the providers' own web search is off for this resolution (ModelPrompt.webSearch). */
  webSearch?: boolean;
}

/**
 * The AI resolution engine, for any feature that needs one (POST /ai/resolve, scheduled AI jobs,
 * AI-resolved markets — docs/ai.md#using-the-resolver-from-another-feature): it knows the models
 * of each mode and asks them in parallel under the configured deadline. It charges nothing and
 * writes nothing; the caller owns its rows, its money and its callbacks.
 */
export interface Resolver {
  /** The live slots as configured (for /readyz and AI_UNAVAILABLE); never keys or hosts. */
  readonly liveStatus: readonly SlotStatus[];
  /** Throws 503 AI_UNAVAILABLE when the mode cannot resolve (a live deployment without four models). */
  requireAvailable(mode: AccountMode): void;
  /** The four models of a mode, in slot order; a live slot not configured answers as a failing model. */
  models(mode: AccountMode): readonly ResolutionModel[];
  /** Asks the mode's four models and decides the consensus. */
  resolve(mode: AccountMode, question: ResolutionQuestion, options: ResolveOptions): Promise<Resolution>;
}

/** Asks `models` about `question` in parallel under one deadline, and decides the consensus. */
export async function resolveWithModels(
  models: readonly ResolutionModel[],
  question: ResolutionQuestion,
  options: ResolveOptions & {
    deadlineMs: number;
    retries: number;
    clock: Clock;
    /** Sibyl's tools for each model call; absent: the models get none. */
    tools?: ((signal: AbortSignal) => ToolSet) | undefined;
  },
): Promise<Resolution> {
  const prompt = buildPrompt(question, options.clock.now());
  if (options.webSearch !== undefined) prompt.webSearch = options.webSearch;
  const votes = await askModels(models, prompt, options);
  return { votes, consensus: decideConsensus(votes, question.outcomes, options.confidenceThreshold) };
}

function notConfigured(status: SlotStatus): ResolutionModel {
  return {
    name: status.model,
    timeoutMs: 1,
    ask: async () => {
      throw new ModelError('not_configured', 'this model slot is not configured on the deployment');
    },
  };
}

/**
 * The resolver of a process. With `data` (Sibyl's stored prices and markets, read from the
 * process's database: docs/ai.md#sibyls-tools), every model call is offered Sibyl's tools, at most
 * AI_MAX_TOOL_CALLS calls answered per model call, the four models of a resolution sharing their
 * reads; without it (or with AI_MAX_TOOL_CALLS=0), none.
 */
export function createResolver(config: AiConfig, clock: Clock, data?: SibylData): Resolver {
  const live = createLiveModels(config.slots, clock);
  const liveModels = live.models.map((model, i) => model ?? notConfigured(live.status[i] as SlotStatus));
  // Sandbox models may sleep up to 30 s on request; the deadline is their only bound.
  const sandboxModels = createSandboxModels(config.deadlineMs);
  const available = live.status.filter((s) => s.configured).length === MODEL_COUNT;
  const models = (mode: AccountMode) => (mode === 'sandbox' ? sandboxModels : liveModels);
  // Per resolution: its models share their reads (sharedReads); per model call: its own count of calls.
  const toolsOf = (reads: SibylData) => (signal: AbortSignal) =>
    createSibylTools(reads, { clock, maxCalls: config.maxToolCalls, signal });
  return {
    liveStatus: live.status,
    requireAvailable(mode) {
      if (mode === 'sandbox' || available) return;
      const missing = live.status.filter((s) => !s.configured).map((s) => s.slot);
      throw new AppError(
        'AI_UNAVAILABLE',
        'AI resolution is not available on this deployment: fewer than four models are configured',
        { details: { configuredModels: MODEL_COUNT - missing.length, requiredModels: MODEL_COUNT } },
      );
    },
    models,
    resolve(mode, question, options) {
      return resolveWithModels(models(mode), question, {
        ...options,
        deadlineMs: config.deadlineMs,
        retries: config.retries,
        clock,
        tools: data && config.maxToolCalls > 0 ? toolsOf(sharedReads(data)) : undefined,
      });
    },
  };
}
