import type { Attestations } from '../attestations/index.js';
import { createContext, withTransaction } from '../context.js';
import type { Database } from '../db/database.js';
import type { OutcomeCode } from '../errors.js';
import { refundCharge } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import { formatUsd } from '../lib/money.js';
import type { Log } from '../logger.js';
import { type QueueHandler, type QueueOptions, WorkQueue } from '../queue/queue.js';
import { type CallbackOutbox, recordAccountEvent } from '../webhooks/index.js';
import { signResolution } from './attest.js';
import type { AiConfig } from './config.js';
import { type Consensus, consensusResult, decideConsensus, MIN_VALID_ANSWERS } from './consensus.js';
import { loadVotes, presentVote, type RequestRow, saveVote } from './requests.js';
import type { Resolver } from './resolver.js';
import type { AiResultObject } from './schemas.js';
import * as sql from './sql.js';
import { MODEL_COUNT, type Vote } from './types.js';

export interface AiQueueDeps {
  db: Database;
  clock: Clock;
  log: Log;
  resolver: Resolver;
  callbacks: CallbackOutbox;
  config: Pick<AiConfig, 'leaseMs' | 'maxAttempts' | 'concurrency'>;
  /** Signs COMPLETED resolutions (docs/attestations.md); absent or off: no attestation. */
  attestations?: Attestations;
}

/** A request claimed by this worker: its row as the claim returned it, lease token included. */
type Claimed = RequestRow & { lease_token: string };

function abandoned(position: number, model: string): Vote {
  return {
    position,
    model,
    outcomeIndex: null,
    confidence: null,
    reasoning: null,
    latencyMs: 0,
    error: { kind: 'abandoned', message: 'no answer after the request’s last attempt' },
    usage: null,
    evidence: [],
    searches: null,
    abstainReason: null,
    // Not asked on the last attempt: what its call was offered is not known.
    search: null,
  };
}

/**
 * The AI resolution work queue: claims PENDING requests (and PROCESSING ones whose lease expired),
 * asks the models that have not answered yet, storing each answer as it arrives, then finishes the
 * request in one transaction that still holds its lease: status, result, refund of a FAILED
 * request and the callback's outbox row commit together, once.
 */
export function aiQueueHandler(deps: AiQueueDeps): QueueHandler<Claimed> {
  const { db, clock, log, resolver, callbacks, config, attestations } = deps;

  /**
   * Finishes a request in one transaction that still holds its lease. `decided` is the consensus of
   * its answers as stored under this lease (the resolver's, when it asked the models); null when
   * some answer of ours was not stored (then the stored ones decide, read inside the transaction).
   */
  async function finish(request: Claimed, decided: Consensus | null): Promise<void> {
    // The keys in hand before the transaction opens (docs/attestations.md#keys).
    await attestations?.ready();
    const ctx = createContext(db, clock, { requestId: request.id });
    await withTransaction(ctx, async (tx) => {
      const [held] = await tx.tx.query(sql.LOCK_IF_LEASED, [request.id, request.lease_token]);
      if (!held) {
        log.warn({ aiRequestId: request.id }, 'AI request taken over by another worker; not finishing it');
        return;
      }
      // The votes as stored, read when they decide, when the attestation signs their evidence, or
      // when a callback carries them.
      const stored =
        decided === null || request.callback_url || (decided.status === 'COMPLETED' && attestations)
          ? await loadVotes(tx.tx, request.id)
          : [];
      const consensus = decided ?? decide(request, stored);
      const now = clock.now();
      let result: AiResultObject | null = null;
      let error: { code: OutcomeCode; message: string } | null = null;
      let refundId: bigint | null = null;
      let failure: Record<string, unknown> | null = null;
      if (consensus.status === 'COMPLETED') {
        // Signed here, in the transaction that stores the result, over what the stored answers
        // decide: a retry after a crash signs the same message (docs/attestations.md#ai-resolutions).
        const attestation = attestations
          ? await signResolution(tx.tx, attestations, request, consensus, stored)
          : null;
        if (attestation)
          log.info({ aiRequestId: request.id, message: attestation.message }, 'AI resolution signed');
        result = {
          ...consensusResult(request.id, request.question, consensus),
          // What `hashQuestion` needs, in the callback too (docs/attestations.md#ai-resolutions).
          outcomes: request.outcomes,
          context: request.context,
          costUsd: formatUsd(request.cost_micros),
          remainingBalanceUsd: formatUsd(request.balance_after_micros),
          ...(attestation ? { attestation } : {}),
        };
      } else {
        const refund = await refundCharge(tx.tx, {
          chargeEntryId: request.charge_entry_id,
          accountId: request.account_id,
          memo: `AI resolution ${request.id} failed`,
        });
        refundId = refund.entryId;
        error = {
          code: 'AI_RESOLUTION_FAILED',
          message:
            `Only ${consensus.validAnswers} of ${MODEL_COUNT} models gave a valid answer ` +
            `(${MIN_VALID_ANSWERS} are needed); the charge of ${formatUsd(refund.amountMicros)} USD was refunded`,
        };
        // The billing fields a failed scheduled job's callback carries too (docs/webhooks.md).
        failure = {
          requestId: request.id,
          error,
          refundUsd: formatUsd(refund.amountMicros),
          remainingBalanceUsd: formatUsd(refund.balanceMicros),
        };
      }
      const deliveryId = request.callback_url
        ? await callbacks.enqueueCallback(tx, {
            accountId: request.account_id,
            url: request.callback_url,
            type: 'ai',
            status: result ? 'completed' : 'failed',
            requestId: request.id,
            // A completed callback carries the votes too, as a scheduled job's result does.
            data: result ? { ...result, votes: stored.map(presentVote) } : failure,
          })
        : null;
      // The account's endpoints hear of it in the same transaction (docs/webhooks.md#event-catalog).
      await recordAccountEvent(
        tx.tx,
        result
          ? {
              accountId: request.account_id,
              mode: request.mode,
              type: 'resolution.completed',
              data: { requestId: request.id, jobId: null, result },
              at: now,
            }
          : {
              accountId: request.account_id,
              mode: request.mode,
              type: 'resolution.failed',
              data: { requestId: request.id, jobId: null, error: error as { code: string; message: string } },
              at: now,
            },
      );
      await tx.tx.query(sql.FINISH, [
        request.id,
        consensus.status,
        result === null ? null : JSON.stringify(result),
        error?.code ?? null,
        error?.message ?? null,
        refundId,
        deliveryId,
        now,
      ]);
      log.info(
        {
          aiRequestId: request.id,
          status: consensus.status,
          validAnswers: consensus.validAnswers,
          canDetermine: consensus.canDetermine,
          attempts: request.attempts,
        },
        'AI request finished',
      );
    });
  }

  /** The consensus of a request's stored answers, a model without one counted as abandoned. */
  function decide(request: Claimed, stored: readonly Vote[]): Consensus {
    const byPosition = new Map(stored.map((v) => [v.position, v]));
    const models = resolver.models(request.mode);
    const votes = Array.from(
      { length: MODEL_COUNT },
      (_, p) => byPosition.get(p) ?? abandoned(p, models[p]?.name ?? 'unknown'),
    );
    return decideConsensus(votes, request.outcomes, request.confidence_threshold);
  }

  return {
    name: 'ai-resolution',
    channel: sql.AI_CHANNEL,
    concurrency: config.concurrency,
    async claim(limit, now) {
      const leaseUntil = new Date(now.getTime() + config.leaseMs);
      return db.query<Claimed>(sql.CLAIM, [now, leaseUntil, limit, randomBase62(16)]);
    },
    async process(request) {
      const lease = { id: request.id, leaseToken: request.lease_token };
      // Only a request claimed before can have stored answers.
      const known = new Map(
        request.attempts > 1 ? (await loadVotes(db, request.id)).map((v) => [v.position, v]) : [],
      );
      const votes = [...known.values()];
      let allStored = true;
      const store = async (vote: Vote) => {
        if (await saveVote(db, lease, vote, clock.now())) votes.push(vote);
        else allStored = false;
      };
      let consensus: Consensus | null = null;
      if (request.attempts > config.maxAttempts) {
        // Its workers kept dying or failing: finish with what was answered, the rest abandoned.
        const models = resolver.models(request.mode);
        for (let p = 0; p < MODEL_COUNT; p++) {
          if (!known.has(p)) await store(abandoned(p, models[p]?.name ?? 'unknown'));
        }
      } else if (known.size < MODEL_COUNT) {
        // The resolver decides over the known answers and the new ones together: stored, its
        // consensus is the request's.
        ({ consensus } = await resolver.resolve(
          request.mode,
          { question: request.question, outcomes: request.outcomes, context: request.context },
          { confidenceThreshold: request.confidence_threshold, known, onVote: store },
        ));
      }
      await finish(request, allStored ? (consensus ?? decide(request, votes)) : null);
    },
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE);
      return row?.next ?? null;
    },
  };
}

export function createAiQueue(deps: AiQueueDeps, options?: QueueOptions): WorkQueue<Claimed> {
  return new WorkQueue(aiQueueHandler(deps), deps, options);
}
