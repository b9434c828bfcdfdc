import type { AccountMode } from '../accounts/index.js';
import { type ResolutionAnswer, requestedResolution } from '../ai/index.js';
import type { Attestation, Attestations } from '../attestations/index.js';
import { AppError } from '../errors.js';
import { priceMessage } from '../prices/index.js';
import type { AiJobInput } from './ports.js';

/**
 * A scheduled price check's attestation (docs/attestations.md#scheduled-jobs): the job's request id,
 * the time the price was computed. Null when attestations are off.
 */
export function signPriceCheck(
  attestations: Attestations | undefined,
  job: { request_id: string; mode: AccountMode },
  priced: { symbol: string; vwapPrice: number; sourceCount: number; isValid: boolean; timeMs: number },
): Promise<Attestation | null> {
  if (!attestations) return Promise.resolve(null);
  return attestations.sign(
    priceMessage({ requestId: job.request_id, mode: job.mode, timeMs: priced.timeMs }, priced),
  );
}

/** A scheduled AI resolution's attestation (kind 2, no market id), over its answer; null when off. */
export function signAiJob(
  attestations: Attestations | undefined,
  job: { request_id: string; mode: AccountMode; request: AiJobInput },
  answer: ResolutionAnswer,
  timeMs: number,
): Promise<Attestation | null> {
  if (!attestations) return Promise.resolve(null);
  const { question, outcomes, context } = job.request;
  return attestations.sign(
    requestedResolution(
      // A job's context of "" was always signed as none.
      {
        id: job.request_id,
        mode: job.mode,
        question,
        outcomes,
        context: context ? context : null,
        marketId: null,
      },
      answer,
      timeMs,
    ),
  );
}

/**
 * Whether this worker cannot sign because a rotation retired its key (docs/attestations.md#rotation):
 * its jobs are then not run but wait for a worker that can. Attestations off is not that: results
 * are stored unsigned.
 */
export async function cannotSign(attestations: Attestations | undefined): Promise<boolean> {
  return attestations !== undefined && (await attestations.ready()) && !(await attestations.signing());
}

/** A signature refused because this worker's key was retired (after the run started). */
export function signingRefused(err: unknown): boolean {
  return err instanceof AppError && err.code === 'ATTESTATION_UNAVAILABLE';
}
