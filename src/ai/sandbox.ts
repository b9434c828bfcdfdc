import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolExecutionOptions } from 'ai';
import { ABSTAIN_REASONS, type AbstainReason } from './evidence.js';
import { ModelError, type ModelPrompt, type RawAnswer, type ResolutionModel } from './types.js';

/** The four simulated models every sandbox resolution uses (and no live one ever does). */
export const SANDBOX_MODELS = ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'] as const;

export const SANDBOX_CONFIDENCE = 0.9;
export const SANDBOX_MAX_DELAY_MS = 30_000;

/** One sandbox model's scripted answer: an outcome index, "cannot determine", or a failure. */
export type SandboxVote = number | 'unknown' | 'fail';

export interface SandboxDirectives {
  votes?: SandboxVote[];
  confidence?: number;
  delayMs?: number;
  /** `none`: the models cite nothing. */
  evidence?: 'none';
  /** Every model that does not fail answers "cannot determine" for this reason. */
  abstain?: AbstainReason;
  /** Every model first calls `sibyl_price` with these arguments, as written (the tool checks them). */
  price?: { symbol: string; at: string };
}

const DIRECTIVE = /^\[sandbox:([a-z]+)=([^\]\s]*)\]/;
const MARKER = '[sandbox:';

function parseVotes(value: string): SandboxVote[] | string {
  const entries = value.split(',');
  if (entries.length !== SANDBOX_MODELS.length) return 'votes takes exactly 4 entries, e.g. 1,1,1,0';
  const votes: SandboxVote[] = [];
  for (const entry of entries) {
    if (entry === '?') votes.push('unknown');
    else if (entry === 'x') votes.push('fail');
    else if (/^\d{1,3}$/.test(entry)) votes.push(Number(entry));
    else return `votes entry "${entry.slice(0, 10)}" is not an outcome index, ? or x`;
  }
  return votes;
}

/**
 * The `[sandbox:…]` directives in a context (docs/ai.md#sandbox), or the problems that make them
 * unreadable. Anything that starts like a directive must be one.
 */
export function parseSandboxDirectives(context: string): {
  directives: SandboxDirectives;
  problems: string[];
} {
  const directives: SandboxDirectives = {};
  const problems: string[] = [];
  let from = 0;
  for (;;) {
    const at = context.indexOf(MARKER, from);
    if (at === -1) break;
    from = at + MARKER.length;
    const match = DIRECTIVE.exec(context.slice(at, at + 200));
    if (!match) {
      problems.push('a [sandbox:…] directive is malformed; write [sandbox:name=value]');
      continue;
    }
    const [, name, value = ''] = match;
    const seen = (key: keyof SandboxDirectives) => {
      if (directives[key] === undefined) return false;
      problems.push(`[sandbox:${name}=…] is given twice`);
      return true;
    };
    if (name === 'votes') {
      if (seen('votes')) continue;
      const votes = parseVotes(value);
      if (typeof votes === 'string') problems.push(votes);
      else directives.votes = votes;
    } else if (name === 'confidence') {
      if (seen('confidence')) continue;
      const confidence = /^(0(\.\d+)?|1(\.0+)?)$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(confidence)) problems.push('confidence takes a number from 0 to 1, e.g. 0.6');
      else directives.confidence = confidence;
    } else if (name === 'delay') {
      if (seen('delayMs')) continue;
      const delay = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(delay) || delay > SANDBOX_MAX_DELAY_MS) {
        problems.push(`delay takes whole milliseconds from 0 to ${SANDBOX_MAX_DELAY_MS}`);
      } else directives.delayMs = delay;
    } else if (name === 'evidence') {
      if (seen('evidence')) continue;
      if (value === 'none') directives.evidence = 'none';
      else problems.push('evidence takes none');
    } else if (name === 'abstain') {
      if (seen('abstain')) continue;
      if (ABSTAIN_REASONS.includes(value as AbstainReason)) directives.abstain = value as AbstainReason;
      else problems.push(`abstain takes one of ${ABSTAIN_REASONS.join(', ')}`);
    } else if (name === 'price') {
      if (seen('price')) continue;
      // Only its shape here: what the symbol and time say is the tool's to judge, in the evidence.
      const split = value.indexOf('@');
      if (split > 0 && split < value.length - 1) {
        directives.price = { symbol: value.slice(0, split), at: value.slice(split + 1) };
      } else problems.push('price takes SYMBOL@TIME, e.g. SOL@2026-11-01T12:00:00Z');
    } else {
      problems.push(
        `unknown directive [sandbox:${name}=…]; known: votes, confidence, delay, evidence, abstain, price`,
      );
    }
  }
  return { directives, problems };
}

/**
 * The source every sandbox model cites unless `[sandbox:evidence=none]`: an https://example.com page
 * named by a hash of the question, quoting the question (cut to 500 characters like any quote).
 * It goes through the same evidence check as a provider's citations.
 */
export function sandboxEvidence(question: string): Record<string, unknown> {
  const page = createHash('sha256').update(question).digest('hex').slice(0, 16);
  return {
    kind: 'web',
    url: `https://example.com/sandbox/${page}`,
    title: 'Sandbox source',
    quote: `A simulated source on the question: ${question}`,
  };
}

type Execute = (input: unknown, options: ToolExecutionOptions) => Promise<unknown>;

/**
 * `[sandbox:price=SYMBOL@TIME]`: the model calls `sibyl_price` through the tools it was given, as a
 * live model's tool loop would (the same `execute`, the same count of calls), and cites the call
 * and Sibyl's answer. Without tools (a process without Sibyl's data), the answer says so.
 */
async function callPrice(
  prompt: ModelPrompt,
  input: { symbol: string; at: string },
  position: number,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const execute = prompt.tools?.sibyl_price?.execute as Execute | undefined;
  const output = execute
    ? await execute(input, { toolCallId: `sandbox-${position}`, messages: [], abortSignal: signal })
    : { status: 'error', error: 'unavailable', message: 'no tools were given to this model call' };
  return { kind: 'sibyl', tool: 'sibyl_price', input, output };
}

/** The outcome all four sandbox models choose without directives: a hash of the question. */
export function sandboxOutcome(question: string, outcomeCount: number): number {
  return createHash('sha256').update(question).digest().readUInt32BE(0) % outcomeCount;
}

function createSandboxModel(position: number, timeoutMs: number): ResolutionModel {
  const name = SANDBOX_MODELS[position] as string;
  return {
    name,
    timeoutMs,
    // Their search is simulated, and off with the prompt's (`sibyl ai evaluate --search off`).
    searchMode: (prompt) => (prompt.webSearch === false ? 'off' : 'on'),
    async ask(prompt: ModelPrompt, signal: AbortSignal): Promise<RawAnswer> {
      const { question, outcomes, context } = prompt.data;
      const { directives } = parseSandboxDirectives(context ?? '');
      if (directives.delayMs) await sleep(directives.delayMs, undefined, { signal });
      // The tool is called first, before the answer is decided, as a live model's loop calls it.
      const looked = directives.price ? await callPrice(prompt, directives.price, position, signal) : null;
      const scripted = directives.votes?.[position];
      if (scripted === 'fail') {
        throw new ModelError('http_error', 'HTTP 503 (simulated by [sandbox:votes])');
      }
      const abstain = directives.abstain;
      const outcomeIndex =
        abstain || scripted === 'unknown' ? null : (scripted ?? sandboxOutcome(question, outcomes.length));
      const why = abstain
        ? `cannot determine (${abstain}), as [sandbox:abstain] asked`
        : scripted === undefined
          ? 'the outcome chosen by a hash of the question'
          : scripted === 'unknown'
            ? 'cannot determine, as [sandbox:votes] asked'
            : 'the outcome [sandbox:votes] asked for';
      // Text, as a provider sends it: it goes through the same parse and schema check.
      const text = JSON.stringify({
        outcomeIndex,
        confidence: directives.confidence ?? SANDBOX_CONFIDENCE,
        reasoning: `Sandbox answer: ${why}.`,
        abstainReason: outcomeIndex === null ? (abstain ?? 'insufficient_evidence') : null,
      });
      // Their web search is off with the prompt's (`sibyl ai evaluate --search off`) as a live slot's is.
      const cites = directives.evidence !== 'none' && prompt.webSearch !== false;
      const evidence: Record<string, unknown>[] = [];
      if (looked) evidence.push(looked);
      if (cites) evidence.push(sandboxEvidence(question));
      return {
        value: JSON.parse(text),
        finishReason: 'stop',
        usage: { inputTokens: 0, outputTokens: 0 },
        evidence,
        searches: cites ? 1 : 0,
      };
    },
  };
}

/** The four sandbox models, deterministic and offline. */
export function createSandboxModels(timeoutMs: number): ResolutionModel[] {
  return SANDBOX_MODELS.map((_, position) => createSandboxModel(position, timeoutMs));
}
