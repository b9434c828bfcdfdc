import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Attestation,
  type AttestationKeySet,
  decodeAttestation,
  ed25519Instruction,
  evidenceHash,
  hashMarketId,
  hashQuestion,
  verifyAttestation,
} from '../../client/src/index.js';
import { type Chain, newChain } from '../../client/test/litesvm.js';
import { officialOutcome } from '../../client/test/program-recipe.js';
import { createResolver } from '../../src/ai/resolver.js';
import { createAttestations } from '../../src/attestations/attestor.js';
import type { Attestations } from '../../src/attestations/index.js';
import { generateSecret } from '../../src/attestations/keys.js';
import { silentLog } from '../../src/logger.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { type ClaimedMarket, lifecycleQueueHandler } from '../../src/markets/lifecycle/lifecycle.js';
import { createPriceService } from '../../src/prices/index.js';
import { WorkQueue } from '../../src/queue/queue.js';
import type { Worker } from '../../src/worker/worker.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { marketCreated, ndjson } from '../markets/events.js';
import { expectEveryFlipFails, readResolution, type TestAttestation } from './helpers.js';
import { signingWorld } from './signing-world.js';

/**
 * One official resolution per market (docs/attestations.md#which-resolution-is-official): the
 * lifecycle that resolves an AI market signs it as a market resolution (kind 3, request-id and
 * market-id fields the SHA-256 of the market id), returned with the market; the same market asked
 * again with `POST /ai/resolve { marketId }` is a kind 2 resolution, which a program following the
 * recipe refuses. A worker that cannot sign leaves the market unresolved, for one that can.
 */

let ctx: TestContext;
let worker: Worker;
let account: TestAccount;
let keys: AttestationKeySet & { sandbox: string | null; live: string | null };
let chain: Chain;
const secret = generateSecret();
const CLOSES = Date.parse('2026-11-22T13:00:00.000Z');

beforeAll(async () => {
  ({ ctx, worker } = await signingWorld(secret));
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  keys = (await ctx.request(account.key, { method: 'GET', url: '/api/v1/attestation/keys' })).json();
  chain = await newChain();
});
afterAll(async () => {
  await ctx.close();
});

async function aiMarket(id: string, description: string, closesAt = CLOSES) {
  const created = marketCreated(
    {
      id,
      closesAt: new Date(closesAt).toISOString(),
      description,
      marketType: 'CATEGORICAL',
      outcomes: ['Yes', 'No', 'Maybe'],
    },
    { at: '2026-11-21T12:00:00.000Z' },
  );
  expect(await ingestText(ctx.database.db, ndjson([created]))).toMatchObject({ refused: 0 });
}

async function detail(id: string) {
  const response = await ctx.request(account.key, { method: 'GET', url: `/api/v1/markets/${id}` });
  expect(response.statusCode).toBe(200);
  return response.json();
}

const sandboxRecipe = (marketId: string) => ({
  marketId,
  publicKey: keys.sandbox ?? '',
  mode: 'sandbox' as const,
});

describe('the official resolution of an AI market', () => {
  it('is signed by the lifecycle as kind 3, returned with the market, verified by the client and on LiteSVM', async () => {
    await aiMarket('official-1', 'Resolves by AI. [sandbox:votes=1,1,1,0]');
    ctx.clock.set(new Date(CLOSES).toISOString());
    await worker.queues.get('market-lifecycle')?.drain();

    const market = await detail('official-1');
    expect(market.status).toBe('FINALIZED');
    const { resolution } = market;
    expect(resolution.winningOutcomeIndex).toBe(1);
    const attestation: Attestation = resolution.attestation;
    expect(attestation.publicKey).toBe(keys.sandbox);
    expect(attestation.version).toBe(2);
    expect(await verifyAttestation(attestation, keys, { mode: 'sandbox' })).toBe(true);
    expect(await verifyAttestation(attestation, keys, { mode: 'live' })).toBe(false);
    expectEveryFlipFails(attestation as TestAttestation, keys.sandbox ?? '');

    const fields = decodeAttestation(attestation);
    const marketIdHash = await hashMarketId('official-1');
    expect(fields).toMatchObject({
      version: 2,
      kind: 'market-resolution',
      mode: 'sandbox',
      requestIdHash: marketIdHash,
      marketIdHash,
      madeAt: Date.parse(resolution.resolvedAt),
      questionHash: await hashQuestion(market.title, ['Yes', 'No', 'Maybe'], market.description),
      outcomeIndex: 1,
      agreeing: 3,
      models: 4,
      canDetermine: true,
    });
    // The votes it returns are those whose evidence the message hashes.
    expect(resolution.votes).toHaveLength(4);
    expect(resolution.votes.some((v: { evidence: unknown[] }) => v.evidence.length > 0)).toBe(true);
    expect(fields.kind !== 'price' && fields.evidenceHash).toBe(await evidenceHash(resolution));
    const [stored] = await ctx.database.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM market_resolution_attestations WHERE market_id = 'official-1'",
    );
    expect(stored?.n).toBe(1);

    // On chain: the Ed25519 program verifies it, and the program's recipe settles on it.
    const instruction = ed25519Instruction(attestation);
    expect(await chain.send([instruction])).toBe('ok');
    await expect(officialOutcome(instruction.data, sandboxRecipe('official-1'))).resolves.toBe(1);
    await expect(officialOutcome(instruction.data, sandboxRecipe('official-2'))).resolves.toBeNull();

    // Anyone may ask about the same market again: a kind 2 resolution, which the recipe refuses.
    const asked = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: { marketId: 'official-1' },
    });
    expect(asked.statusCode).toBe(200);
    await worker.queues.get('ai-resolution')?.drain();
    const record = (
      await ctx.request(account.key, { method: 'GET', url: `/api/v1/ai/request/${asked.json().requestId}` })
    ).json();
    expect(record.status).toBe('COMPLETED');
    const shopped: Attestation = record.result.attestation;
    expect(await verifyAttestation(shopped, keys, { mode: 'sandbox' })).toBe(true);
    expect(decodeAttestation(shopped)).toMatchObject({ version: 2, kind: 'resolution', marketIdHash });
    expect(readResolution(Buffer.from(shopped.message, 'base64')).kind).toBe(2);
    const shoppedInstruction = ed25519Instruction(shopped);
    expect(await chain.send([shoppedInstruction])).toBe('ok');
    await expect(officialOutcome(shoppedInstruction.data, sandboxRecipe('official-1'))).resolves.toBeNull();
    // The market still shows its own.
    expect((await detail('official-1')).resolution.attestation).toEqual(attestation);
  });

  it('a market the models cannot decide carries none (left RESOLVING for an administrator)', async () => {
    const closes = CLOSES + 3600_000;
    await aiMarket('official-undecided', 'Resolves by AI. [sandbox:votes=?,?,?,x]', closes);
    ctx.clock.set(new Date(closes).toISOString());
    await worker.queues.get('market-lifecycle')?.drain();
    const market = await detail('official-undecided');
    expect(market.status).toBe('RESOLVING');
    expect(market.resolution).toMatchObject({ attestation: null, votes: null });
  });

  it('a worker that cannot sign leaves the market RESOLVING, not tried, and a worker that signs resolves it after the lease', async () => {
    const closes = CLOSES + 2 * 3600_000;
    await aiMarket('official-retired', 'Resolves by AI. [sandbox:votes=0,0,0,1]', closes);
    const signing = createAttestations(ctx.database.db, ctx.config.attestations, ctx.clock);
    let canSign = false;
    // This worker's key was retired by a rotation: it signs nothing (docs/attestations.md#rotation).
    const retired: Attestations = {
      ready: () => signing.ready(),
      publicKeys: () => signing.publicKeys(),
      signing: async () => canSign,
      sign: (what) => signing.sign(what),
      close: async () => {},
    };
    const leaseMs = 120_000;
    const handler = lifecycleQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      prices: createPriceService(ctx.config.prices, ctx.clock, []),
      resolver: createResolver(ctx.config.ai, ctx.clock),
      settings: { lifecycleConcurrency: 10, lifecycleLeaseMs: leaseMs },
      attestations: retired,
    });
    const queue = new WorkQueue<ClaimedMarket>(handler, {
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
    });
    ctx.clock.set(new Date(closes).toISOString());
    expect(await queue.drain()).toBe(1);
    const waiting = await detail('official-retired');
    expect(waiting).toMatchObject({
      status: 'RESOLVING',
      resolution: { winningOutcomeIndex: null, attestation: null },
    });
    const [row] = await ctx.database.db.query<{ lifecycle_attempted: boolean }>(
      "SELECT lifecycle_attempted FROM markets WHERE id = 'official-retired'",
    );
    expect(row?.lifecycle_attempted).toBe(false);
    expect(await queue.drain()).toBe(0); // not before its lease's time

    canSign = true;
    ctx.clock.advance(leaseMs);
    expect(await queue.drain()).toBe(1);
    const resolved = await ctx.database.db.query<{ status: string; winning_outcome_index: number }>(
      "SELECT status, winning_outcome_index FROM markets WHERE id = 'official-retired'",
    );
    expect(resolved[0]).toMatchObject({ status: 'FINALIZED', winning_outcome_index: 0 });
    const [kept] = await ctx.database.db.query<{ attestation: Attestation }>(
      "SELECT attestation FROM market_resolution_attestations WHERE market_id = 'official-retired'",
    );
    expect(kept && decodeAttestation(kept.attestation)).toMatchObject({
      kind: 'market-resolution',
      outcomeIndex: 0,
    });
    await signing.close();
  });
});
