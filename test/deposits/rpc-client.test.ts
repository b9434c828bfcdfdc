import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, retryDelayMs } from '../../src/deposits/backoff.js';
import { SolanaRpcError } from '../../src/deposits/rpc.js';
import {
  createSolanaRpcClient,
  type RetryEvent,
  type SolanaRpcClientOptions,
} from '../../src/deposits/rpc-client.js';
import { ManualClock } from '../../src/lib/clock.js';
import * as cases from '../helpers/solana/cases.js';
import type { ExecutedTransaction } from '../helpers/solana/chain.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld } from '../helpers/solana/world.js';

let world: DepositWorld;
let rpc: FakeSolanaRpc;
let txs: ExecutedTransaction[];

/** A client whose sleeps are recorded, not slept, and whose jitter is fixed. */
function client(overrides: Partial<SolanaRpcClientOptions> = {}) {
  const delays: number[] = [];
  const retries: RetryEvent[] = [];
  const c = createSolanaRpcClient({
    url: rpc.url,
    timeoutMs: 10_000,
    maxAttempts: 5,
    batchSize: 100,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    onRetry: (event) => retries.push(event),
    ...overrides,
  });
  return { c, delays, retries };
}

async function failure(promise: Promise<unknown>): Promise<SolanaRpcError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SolanaRpcError);
  return err as SolanaRpcError;
}

beforeAll(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  txs = [];
  for (let i = 1; i <= 5; i++) {
    const tx = (await cases.solDeposit(world, BigInt(i) * 1_000_000n)).tx;
    txs.push(tx);
    rpc.publish(tx);
  }
});

afterAll(async () => {
  await rpc.close();
});

describe('backoff', () => {
  const policy = { baseDelayMs: 250, maxDelayMs: 10_000 };
  it('full jitter under a doubling ceiling, capped', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, 0.5))).toEqual([125, 250, 500, 1000]);
    expect(retryDelayMs(policy, 30, 0.999)).toBe(9990);
    expect(retryDelayMs(policy, 3, 0)).toBe(0);
  });
  it('never sooner than Retry-After, which is itself capped', () => {
    expect(retryDelayMs(policy, 1, 0.5, 2000)).toBe(2000);
    expect(retryDelayMs(policy, 8, 0.9, 10)).toBe(9000);
    expect(retryDelayMs(policy, 1, 0, 3_600_000)).toBe(MAX_RETRY_AFTER_MS);
  });
});

describe('Solana RPC client', () => {
  it('sends getSignaturesForAddress with the paging options and reads the list', async () => {
    const { c } = client();
    const before = (txs[3] as ExecutedTransaction).signature;
    const until = (txs[0] as ExecutedTransaction).signature;
    const list = await c.getSignaturesForAddress(world.treasury.address, {
      commitment: 'finalized',
      limit: 2,
      before,
      until,
    });
    expect(list.map((s) => s.signature)).toEqual([txs[2]?.signature, txs[1]?.signature]);
    expect(rpc.calls.at(-1)).toEqual({
      method: 'getSignaturesForAddress',
      params: [world.treasury.address, { commitment: 'finalized', limit: 2, before, until }],
    });
  });

  it('retries HTTP 429 no sooner than Retry-After, reporting each retry', async () => {
    const { c, delays, retries } = client();
    rpc.failNext({ kind: 'http', status: 429, headers: { 'retry-after': '2' } }, 2);
    expect(await c.getSlot('finalized')).toBe(txs[4]?.slot);
    expect(delays).toEqual([2000, 2000]);
    expect(retries.map((r) => [r.method, r.attempt, r.error.kind, r.error.details.status])).toEqual([
      ['getSlot', 1, 'rate_limited', 429],
      ['getSlot', 2, 'rate_limited', 429],
    ]);
  });

  it('reads a Retry-After given as an HTTP date against the injected clock', async () => {
    const clock = new ManualClock('2026-11-25T12:00:00Z');
    const { c, delays } = client({ clock });
    rpc.failNext({ kind: 'http', status: 429, headers: { 'retry-after': 'Wed, 25 Nov 2026 12:00:03 GMT' } });
    await c.getSlot('finalized');
    expect(delays).toEqual([3000]);
  });

  it('retries 5xx, cut connections and transient JSON-RPC errors with growing jittered delays', async () => {
    const { c, delays, retries } = client();
    rpc.failNext({ kind: 'http', status: 503 });
    rpc.failNext({ kind: 'drop' });
    rpc.failNext({ kind: 'rpc-error', code: -32005, message: 'Node is behind by 42 slots' });
    expect(await c.getSlot('confirmed')).toBeGreaterThan(0);
    expect(retries.map((r) => r.error.kind)).toEqual(['http_error', 'network', 'rpc_error']);
    expect(delays).toEqual([125, 250, 500]);
  });

  it('does not retry a permanent JSON-RPC error', async () => {
    const { c, retries } = client();
    const sent = rpc.httpRequests;
    rpc.failNext({ kind: 'rpc-error', code: -32602, message: 'Invalid params' });
    const err = await failure(c.getSlot('finalized'));
    expect([err.kind, err.details.code, err.message]).toEqual([
      'rpc_error',
      -32602,
      'JSON-RPC error -32602: Invalid params',
    ]);
    expect(retries).toEqual([]);
    expect(rpc.httpRequests - sent).toBe(1);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { c, retries } = client({ maxAttempts: 3 });
    const sent = rpc.httpRequests;
    rpc.failNext({ kind: 'http', status: 429 }, 3);
    const err = await failure(c.getSlot('finalized'));
    expect(err.kind).toBe('rate_limited');
    expect(retries).toHaveLength(2);
    expect(rpc.httpRequests - sent).toBe(3);
  });

  it('a result outside the schema is a bad response, not retried', async () => {
    const { c, retries } = client();
    rpc.failNext({ kind: 'http', status: 200, body: '{"jsonrpc":"2.0","result":[{"signature":42}],"id":1}' });
    const err = await failure(
      c.getSignaturesForAddress(world.treasury.address, { commitment: 'finalized', limit: 5 }),
    );
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/result does not match/);
    expect(retries).toEqual([]);
  });

  it('one transaction answered outside the schema is that transaction’s answer (unreadable), not the call’s failure', async () => {
    const { c, retries } = client({ batchSize: 1 });
    rpc.failNext(
      { kind: 'http', status: 200, body: '{"jsonrpc":"2.0","result":{"slot":7,"meta":{}},"id":1}' },
      1,
      'getTransaction',
    );
    const [odd, fine] = await c.getTransactions(
      txs.slice(0, 2).map((t) => t.signature),
      'finalized',
    );
    expect(odd).toEqual({ unreadable: expect.stringMatching(/^result does not match: /) });
    expect(fine && 'transaction' in fine ? fine.transaction.signatures[0] : null).toBe(txs[1]?.signature);
    expect(retries).toEqual([]);
  });

  it('times out a node that never answers', async () => {
    const { c } = client({ timeoutMs: 200, maxAttempts: 1 });
    rpc.failNext({ kind: 'hang' });
    expect((await failure(c.getSlot('finalized'))).kind).toBe('timeout');
  });

  it('batches getTransaction calls, answers in order, null for what the node does not have', async () => {
    const { c } = client({ batchSize: 2 });
    const unknown = (await cases.solDeposit(world, 3n)).tx.signature;
    const signatures = [...txs.map((t) => t.signature), unknown];
    const sent = rpc.httpRequests;
    const calls = rpc.callsOf('getTransaction').length;
    const result = await c.getTransactions(signatures, 'finalized');
    expect(rpc.httpRequests - sent).toBe(3);
    expect(rpc.callsOf('getTransaction').length - calls).toBe(6);
    expect(result.map((t) => (t && 'transaction' in t ? t.transaction.signatures[0] : null))).toEqual([
      ...signatures.slice(0, 5),
      null,
    ]);
    expect(rpc.callsOf('getTransaction').at(-1)?.params[1]).toEqual({
      encoding: 'jsonParsed',
      commitment: 'finalized',
      maxSupportedTransactionVersion: 0,
    });
  });

  it('retries a whole batch when one of its calls meets a transient error', async () => {
    const { c, retries } = client({ batchSize: 10 });
    rpc.failNext(
      { kind: 'rpc-error', code: -32004, message: 'Block not available for slot 1' },
      1,
      'getTransaction',
    );
    const result = await c.getTransactions(
      txs.map((t) => t.signature),
      'finalized',
    );
    expect(result.every((t) => t !== null)).toBe(true);
    expect(retries.map((r) => r.error.details.code)).toEqual([-32004]);
  });

  it('never puts the URL (where providers keep API keys) in an error', async () => {
    const { c } = client({ url: `${rpc.url}/?api-key=SECRET-KEY`, maxAttempts: 1 });
    for (const fault of [{ kind: 'http', status: 503 }, { kind: 'drop' }] as const) {
      rpc.failNext(fault);
      const err = await failure(c.getSlot('finalized'));
      expect(`${err.message} ${JSON.stringify(err)} ${err.stack}`).not.toContain('SECRET');
    }
  });
});
