import type { AccountMode } from '../accounts/accounts.js';
import type { TxContext } from '../context.js';
import type { Queryable } from '../db/database.js';

/**
 * Where a job's result goes: a webhook outbox row written in the transaction that finishes the job,
 * and the rule a callback URL must meet when the job is scheduled.
 */
export interface CallbackOutbox {
  /** Throws VALIDATION_ERROR (naming `path`) for a URL the service will not call. */
  validateCallbackUrl(url: string, path: string): void;
  enqueueCallback(
    tx: TxContext,
    input: {
      accountId: string;
      url: string;
      type: 'ai' | 'price';
      status: 'completed' | 'failed';
      requestId: string;
      data: unknown;
    },
  ): Promise<string>;
  /** A delivery as its owner sees it: state and attempts (null when unknown). */
  deliveryView(db: Queryable, deliveryId: string): Promise<Record<string, unknown> | null>;
}

export interface AiJobInput {
  question: string;
  outcomes: string[];
  context?: string | undefined;
  confidenceThreshold?: number | undefined;
}

/** What a scheduled AI job needs of the AI resolution. */
export interface AiJobResolver {
  /** Throws VALIDATION_ERROR with details when the question, outcomes, context or threshold break the limits. */
  validate(input: AiJobInput): void;
  /** Throws 503 AI_UNAVAILABLE when this deployment cannot resolve for accounts of `mode`. */
  assertAvailable(mode: AccountMode): void;
  /** Resolves now: the result object of a completed resolution, or why it failed. */
  resolve(
    input: AiJobInput,
    mode: AccountMode,
    requestId: string,
  ): Promise<
    { ok: true; result: Record<string, unknown> } | { ok: false; error: { code: string; message: string } }
  >;
}
