import type { Database, Queryable } from '../../src/db/database.js';
import { AppError, validationError } from '../../src/errors.js';
import type { AiJobInput, AiJobResolver, CallbackOutbox } from '../../src/jobs/ports.js';

export const CALLBACK_TABLE = `CREATE TABLE IF NOT EXISTS test_callbacks (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL, url text NOT NULL, type text NOT NULL, status text NOT NULL,
  request_id text NOT NULL, data jsonb NOT NULL)`;

/**
 * An outbox that records each callback as a row in the caller's transaction (so a rolled-back
 * finish leaves none), for tests of the features that call back.
 */
export function recordingOutbox(): CallbackOutbox {
  return {
    validateCallbackUrl(url, path) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (parsed?.protocol !== 'https:') throw validationError([{ path, message: 'must be an https URL' }]);
    },
    async enqueueCallback(tx, input) {
      const [row] = await tx.tx.query<{ id: bigint }>(
        `INSERT INTO test_callbacks (account_id, url, type, status, request_id, data)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [input.accountId, input.url, input.type, input.status, input.requestId, JSON.stringify(input.data)],
      );
      return `dlv_${row?.id}`;
    },
    async deliveryView(_db: Queryable, deliveryId: string) {
      return { id: deliveryId, status: 'recorded' };
    },
  };
}

export async function callbacks(
  db: Database,
): Promise<
  { account_id: string; type: string; status: string; request_id: string; data: Record<string, unknown> }[]
> {
  return db.query('SELECT account_id, type, status, request_id, data FROM test_callbacks ORDER BY id');
}

/**
 * A stand-in AI resolution for scheduled-job tests: outcome 0 unless the context says
 * `fail` (fewer than three models answered) or `throw` (an unexpected error).
 */
export function scriptedAi(options: { available?: boolean } = {}): AiJobResolver & { runs: AiJobInput[] } {
  const runs: AiJobInput[] = [];
  return {
    runs,
    validate(input) {
      if (input.question.length < 1 || input.question.length > 1000)
        throw validationError([{ path: 'body.question', message: 'must be 1 to 1,000 characters' }]);
      if (input.outcomes.length < 2)
        throw validationError([{ path: 'body.outcomes', message: 'needs at least 2' }]);
    },
    assertAvailable(mode) {
      if (mode === 'live' && options.available === false)
        throw new AppError('AI_UNAVAILABLE', 'Fewer than four models are configured');
    },
    async resolve(input, _mode, requestId) {
      runs.push(input);
      if (input.context === 'throw') throw new Error('provider client crashed');
      if (input.context === 'fail')
        return { ok: false, error: { code: 'AI_RESOLUTION_FAILED', message: 'Only 2 of 4 models answered' } };
      return {
        ok: true,
        result: {
          requestId,
          question: input.question,
          winningOutcomeIndex: 0,
          winningOutcomeLabel: input.outcomes[0],
          confidence: 0.9,
          agreement: 1,
          canDetermine: true,
        },
      };
    },
  };
}
