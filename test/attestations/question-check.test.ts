import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAttestation, hashQuestion, verifyAttestation } from '../../client/src/index.js';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import type { Worker } from '../../src/worker/worker.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { callbacks } from '../helpers/jobs.js';
import { signingWorld } from './signing-world.js';

/**
 * The client's question check (docs/attestations.md#ai-resolutions) works from the record alone: the
 * poll, the list and the callback return the question, outcomes and context as they were sent, and
 * the attestation hashes exactly those, so a context left out and a context of "" sign different bytes.
 */

let ctx: TestContext;
let worker: Worker;
let account: TestAccount;
const HOOK = 'https://hooks.example.com/sibyl';
const secret = generateSecret();
const sandboxKey = keyPairFromSecret(secret, 'test').sandbox.publicKeyBase58;
const question = 'Did it rain in Paris on 2026-11-22?';
const outcomes = ['Yes', 'No'];

beforeAll(async () => {
  ({ ctx, worker } = await signingWorld(secret));
  account = await ctx.createAccount({ balanceUsd: '5.00' });
});
afterAll(async () => {
  await ctx.close();
});

async function resolve(context: string | undefined) {
  const submitted = await ctx.request(account.key, {
    method: 'POST',
    url: '/api/v1/ai/resolve',
    payload: { question, outcomes, ...(context === undefined ? {} : { context }), callbackUrl: HOOK },
  });
  expect(submitted.statusCode).toBe(200);
  const { requestId } = submitted.json();
  await worker.queues.get('ai-resolution')?.drain();
  const record = (
    await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/request/${requestId}` })
  ).json();
  expect(record.status).toBe('COMPLETED');
  return record;
}

describe('the question check from a poll answer', () => {
  const context = 'Use Météo-France’s Paris-Montsouris station.';
  const cases: { sent: string | undefined; returned: string | null }[] = [
    { sent: undefined, returned: null },
    { sent: '', returned: '' },
    { sent: context, returned: context },
  ];
  // biome-ignore lint/suspicious/noExplicitAny: the poll's JSON answer
  const records: any[] = [];
  beforeAll(async () => {
    for (const c of cases) records.push(await resolve(c.sent));
  });

  it('signs exactly what was sent: no context, "" and a context are three different questions', async () => {
    const hashes: string[] = [];
    for (const [i, c] of cases.entries()) {
      const attestation = records[i].result.attestation;
      expect(await verifyAttestation(attestation, [sandboxKey])).toBe(true);
      const fields = decodeAttestation(attestation.message);
      if (fields.kind !== 'resolution') throw new Error(`not a resolution: ${fields.kind}`);
      expect(fields.questionHash).toBe(await hashQuestion(question, outcomes, c.sent));
      hashes.push(fields.questionHash);
    }
    expect(new Set(hashes).size).toBe(3);
  });

  it('poll, callback and list return the question, outcomes and context the check needs', async () => {
    for (const [i, c] of cases.entries()) {
      const record = records[i];
      expect({ question: record.question, outcomes: record.outcomes, context: record.context }).toEqual({
        question,
        outcomes,
        context: c.returned,
      });
      // The documented check, with the record's own fields.
      const fields = decodeAttestation(record.result.attestation.message);
      if (fields.kind !== 'resolution') throw new Error(`not a resolution: ${fields.kind}`);
      expect(fields.questionHash).toBe(await hashQuestion(record.question, record.outcomes, record.context));
      // The callback carries the same three fields beside the same attestation.
      const [delivery] = (await callbacks(ctx.database.db)).filter((d) => d.request_id === record.requestId);
      expect(delivery?.data).toMatchObject({
        question,
        outcomes,
        context: c.returned,
        attestation: record.result.attestation,
      });
    }
    const list = (await ctx.request(account.key, { method: 'GET', url: '/api/v1/ai/requests' })).json();
    const listed = list.requests as { requestId: string; context: string | null }[];
    expect(new Map(listed.map((r) => [r.requestId, r.context]))).toEqual(
      new Map(cases.map((c, i) => [records[i].requestId, c.returned])),
    );
  });
});
