import type { AccountMode } from '../accounts/index.js';
import type { ResolutionAnswer } from '../ai/index.js';

export interface AiJobInput {
  question: string;
  outcomes: string[];
  context?: string | undefined;
  confidenceThreshold?: number | undefined;
}

/** What a scheduled AI job needs of the AI resolution. */
export interface AiJobResolver {
  /** Throws VALIDATION_ERROR with details when the question, outcomes or context break the limits. */
  validate(input: AiJobInput, mode: AccountMode): void;
  /** Throws 503 AI_UNAVAILABLE when this deployment cannot resolve for accounts of `mode`. */
  assertAvailable(mode: AccountMode): void;
  /**
   * Resolves now: the result object of a completed resolution and the answer its attestation signs,
   * or why it failed.
   */
  resolve(
    input: AiJobInput,
    mode: AccountMode,
    requestId: string,
  ): Promise<
    | { ok: true; result: Record<string, unknown>; answer: ResolutionAnswer }
    | { ok: false; error: { code: string; message: string } }
  >;
}
