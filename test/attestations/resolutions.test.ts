import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import type { Worker } from '../../src/worker/worker.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { callbacks } from '../helpers/jobs.js';
import {
  evidenceDigest,
  expectEveryFlipFails,
  fixedPointValue,
  readPrice,
  readResolution,
  sha256,
  type TestAttestation,
  verifies,
} from './helpers.js';
import { signingWorld } from './signing-world.js';

/**
 * COMPLETED AI resolutions and scheduled jobs' results are signed once, when they are made, and
 * stored with them: the poll, the job's record and the callback carry the same bytes, which verify
 * against the published key and decode to the answer's own values (docs/attestations.md).
 */

let ctx: TestContext;
let worker: Worker;
let account: TestAccount;
const HOOK = 'https://hooks.example.com/sibyl';
const secret = generateSecret();
const keys = keyPairFromSecret(secret, 'test');
const sandboxKey = keys.sandbox.publicKeyBase58;

beforeAll(async () => {
  ({ ctx, worker } = await signingWorld(secret));
  account = await ctx.createAccount({ balanceUsd: '5.00' });
});
afterAll(async () => {
  await ctx.close();
});

const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString();
const questionHash = (question: string, outcomes: string[], context: string | null) =>
  sha256(JSON.stringify([question, outcomes, context]));

function expectSigned(a: TestAttestation) {
  expect(a.publicKey).toBe(sandboxKey);
  expect(verifies(a, sandboxKey)).toBe(true);
  expect(verifies(a, keys.live.publicKeyBase58)).toBe(false);
  expectEveryFlipFails(a, sandboxKey);
}

async function callbackData(requestId: string) {
  const rows = (await callbacks(ctx.database.db)).filter((c) => c.request_id === requestId);
  expect(rows).toHaveLength(1);
  return rows[0]?.data as { attestation?: TestAttestation };
}

describe('an AI resolution', () => {
  it('COMPLETED: poll and callback carry one attestation of its own values, time = the last answer', async () => {
    const body = {
      question: 'Will the attestation verify?',
      outcomes: ['Yes', 'No'],
      context: '[sandbox:votes=0,0,0,1]',
      callbackUrl: HOOK,
    };
    const submitted = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: body,
    });
    expect(submitted.statusCode).toBe(200);
    const { requestId } = submitted.json();
    await worker.queues.get('ai-resolution')?.drain();
    const record = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/request/${requestId}` })
    ).json();
    expect(record.status).toBe('COMPLETED');
    const { result } = record;
    expectSigned(result.attestation);
    const message = Buffer.from(result.attestation.message, 'base64');
    expect(message.length).toBe(150);
    const fields = readResolution(message);
    const [last] = await ctx.database.db.query<{ at: Date }>(
      'SELECT max(answered_at) AS at FROM ai_votes WHERE request_id = $1',
      [requestId],
    );
    expect(fields).toMatchObject({
      magic: 'SIBYL',
      version: 2,
      kind: 2,
      mode: 'sandbox',
      timeMs: last?.at.getTime(),
      outcome: result.winningOutcomeIndex,
      confidenceBp: Math.round(result.confidence * 10_000),
      agreeing: result.agreement * 4,
      models: result.modelsUsed.length,
      canDetermine: result.canDetermine,
    });
    expect(fields.requestIdHash.equals(sha256(requestId))).toBe(true);
    expect(fields.questionHash.equals(questionHash(body.question, body.outcomes, body.context))).toBe(true);
    expect(fields.marketIdHash.equals(Buffer.alloc(32))).toBe(true);
    // The votes' evidence as the record shows it, in slot order, as canonical JSON.
    expect(record.votes.some((v: { evidence: unknown[] }) => v.evidence.length > 0)).toBe(true);
    expect(fields.evidenceHash.equals(evidenceDigest(record.votes))).toBe(true);
    expect(result.attestation.version).toBe(2);
    // The callback's data and a second poll: the same bytes.
    expect((await callbackData(requestId)).attestation).toEqual(result.attestation);
    const again = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/request/${requestId}` })
    ).json();
    expect(again.result.attestation).toEqual(result.attestation);
  });

  it('FAILED: no attestation', async () => {
    const submitted = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: {
        question: 'Fails?',
        outcomes: ['Yes', 'No'],
        context: '[sandbox:votes=0,x,x,x]',
        callbackUrl: HOOK,
      },
    });
    const { requestId } = submitted.json();
    await worker.queues.get('ai-resolution')?.drain();
    const record = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/request/${requestId}` })
    ).json();
    expect(record.status).toBe('FAILED');
    expect(JSON.stringify(record)).not.toContain('attestation');
  });
});

describe('scheduled jobs', () => {
  const drain = () => worker.queues.get('scheduled-jobs')?.drain();

  it('a price check’s result and its callback carry the attestation of the price taken', async () => {
    const scheduled = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/schedule',
      payload: { symbol: 'JUP', resolutionTimestamp: at(60_000), callbackUrl: HOOK },
    });
    const { jobId } = scheduled.json();
    ctx.clock.advance(60_000);
    await drain();
    const detail = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/price/scheduled/${jobId}` })
    ).json();
    expect(detail.status).toBe('COMPLETED');
    const { result } = detail;
    expectSigned(result.attestation);
    const fields = readPrice(Buffer.from(result.attestation.message, 'base64'));
    expect(fields).toMatchObject({
      kind: 1,
      mode: 'sandbox',
      sources: result.sourceCount,
      valid: result.isValid,
    });
    expect(fields.timeMs).toBe(Date.parse(result.resolutionTimestamp));
    expect(fields.requestIdHash.equals(sha256(result.requestId))).toBe(true);
    expect(fields.asset.equals(sha256('JUP'))).toBe(true);
    expect(fixedPointValue(fields.price, fields.exponent)).toBe(result.vwapPrice);
    expect((await callbackData(result.requestId)).attestation).toEqual(result.attestation);
  });

  it('a scheduled AI resolution’s result carries its attestation', async () => {
    const payload = {
      question: 'Scheduled and signed?',
      outcomes: ['Yes', 'No'],
      context: '[sandbox:votes=1,1,1,1]',
      resolutionTimestamp: at(60_000),
      callbackUrl: HOOK,
    };
    const { jobId } = (
      await ctx.request(account.key, { method: 'POST', url: '/api/v1/ai/schedule', payload })
    ).json();
    ctx.clock.advance(60_000);
    await drain();
    const detail = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/scheduled/${jobId}` })
    ).json();
    expect(detail.status).toBe('COMPLETED');
    const { result } = detail;
    expectSigned(result.attestation);
    const fields = readResolution(Buffer.from(result.attestation.message, 'base64'));
    expect(fields).toMatchObject({
      version: 2,
      kind: 2,
      outcome: result.winningOutcomeIndex,
      confidenceBp: Math.round(result.confidence * 10_000),
      agreeing: result.agreement * 4,
      models: 4,
      canDetermine: result.canDetermine,
    });
    expect(fields.requestIdHash.equals(sha256(result.requestId))).toBe(true);
    expect(
      fields.questionHash.equals(questionHash(payload.question, payload.outcomes, payload.context)),
    ).toBe(true);
    expect(fields.evidenceHash.equals(evidenceDigest(result.votes))).toBe(true);
  });
});
