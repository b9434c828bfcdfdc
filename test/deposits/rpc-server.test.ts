import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as cases from '../helpers/solana/cases.js';
import type { ExecutedTransaction } from '../helpers/solana/chain.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld } from '../helpers/solana/world.js';

/**
 * The fake Solana RPC speaks the wire protocol as a node does (docs/deposits.md#the-rpc-client): raw HTTP
 * here, so the envelope itself is what is checked.
 */
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let txs: ExecutedTransaction[];

async function post(body: unknown, raw = false) {
  const response = await fetch(rpc.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

const call = (method: string, params: unknown[], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

beforeAll(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  txs = [];
  for (let i = 1; i <= 5; i++) txs.push((await cases.solDeposit(world, BigInt(i) * 1_000_000n)).tx);
  for (const tx of txs.slice(0, 3)) rpc.publish(tx);
  rpc.publish(txs[3] as ExecutedTransaction, { finalized: false });
  rpc.publish(txs[4] as ExecutedTransaction, { orphaned: true });
});

afterAll(async () => {
  await rpc.close();
});

describe('fake Solana RPC: envelope', () => {
  it('errors come inside HTTP 200 with the request id', async () => {
    expect(await post(call('getBalanceOfEverything', [], 7))).toMatchObject({
      status: 200,
      body: { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 7 },
    });
    expect((await post('{not json', true)).body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
    expect((await post({ id: 1, method: 'getSlot' })).body.error).toEqual({
      code: -32600,
      message: 'Invalid request',
    });
    expect((await post(call('getSignaturesForAddress', ['not-an-address']))).body.error).toEqual({
      code: -32602,
      message: 'Invalid param: Invalid',
    });
  });

  it('answers a batch with an array, each answer under its id; an empty batch is an invalid request', async () => {
    const { body } = await post([call('getSlot', [{ commitment: 'finalized' }], 'a'), call('nope', [], 'b')]);
    expect(body).toEqual([
      { jsonrpc: '2.0', result: txs[2]?.slot, id: 'a' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'b' },
    ]);
    expect((await post([])).body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid request' },
      id: null,
    });
  });

  it('HTTP 429 when told to, with a JSON-RPC error body and the given Retry-After', async () => {
    rpc.failNext({ kind: 'http', status: 429, headers: { 'retry-after': '2' } });
    const limited = await post(call('getSlot', []));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.body.error.code).toBe(429);
    expect((await post(call('getSlot', []))).status).toBe(200);
  });

  it('refuses commitment below confirmed', async () => {
    expect((await post(call('getSlot', [{ commitment: 'processed' }]))).body.error).toEqual({
      code: -32602,
      message: 'Method does not support commitment below `confirmed`',
    });
  });
});

describe('fake Solana RPC: getTransaction', () => {
  const get = (signature: string, config: object) => post(call('getTransaction', [signature, config]));
  const parsed = { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 };

  it('returns the jsonParsed transaction; null for an unknown signature', async () => {
    const tx = txs[0] as ExecutedTransaction;
    const { body } = await get(tx.signature, parsed);
    expect(body.result.transaction.signatures).toEqual([tx.signature]);
    expect(body.result.meta.err).toBeNull();
    const unknown = (await cases.solDeposit(world, 1n)).tx.signature;
    expect((await get(unknown, parsed)).body).toEqual({ jsonrpc: '2.0', result: null, id: 1 });
  });

  it('a v0 transaction without maxSupportedTransactionVersion is an error, as on a real node', async () => {
    const { body } = await get((txs[0] as ExecutedTransaction).signature, { encoding: 'jsonParsed' });
    expect(body.error.code).toBe(-32015);
    expect(body.error.message).toMatch(/maxSupportedTransactionVersion/);
  });

  it('confirmed-only transactions are null at finalized; orphaned ones vanish once finality passes them', async () => {
    const confirmedOnly = (txs[3] as ExecutedTransaction).signature;
    const orphan = (txs[4] as ExecutedTransaction).signature;
    expect((await get(confirmedOnly, { ...parsed, commitment: 'finalized' })).body.result).toBeNull();
    expect((await get(confirmedOnly, { ...parsed, commitment: 'confirmed' })).body.result).not.toBeNull();
    expect((await get(orphan, { ...parsed, commitment: 'confirmed' })).body.result).not.toBeNull();
    const later = (await cases.solDeposit(world, 9n)).tx;
    const isolated = await FakeSolanaRpc.start();
    try {
      isolated.publish(txs[4] as ExecutedTransaction, { orphaned: true });
      isolated.publish(later);
      const again = await fetch(isolated.url, {
        method: 'POST',
        body: JSON.stringify(call('getTransaction', [orphan, { ...parsed, commitment: 'confirmed' }])),
      });
      expect(((await again.json()) as { result: unknown }).result).toBeNull();
    } finally {
      await isolated.close();
    }
  });
});

describe('fake Solana RPC: getSignaturesForAddress', () => {
  const list = async (config: object) =>
    (await post(call('getSignaturesForAddress', [world.treasury.address, config]))).body.result as {
      signature: string;
      confirmationStatus: string;
    }[];
  const sig = (i: number) => (txs[i] as ExecutedTransaction).signature;

  it('newest first, with slot, err, memo, blockTime and confirmationStatus', async () => {
    const entries = await list({ commitment: 'confirmed' });
    expect(entries.map((e) => e.signature)).toEqual([sig(4), sig(3), sig(2), sig(1), sig(0)]);
    const tx = txs[0] as ExecutedTransaction;
    expect(entries[4]).toEqual({
      signature: tx.signature,
      slot: tx.slot,
      err: null,
      memo: null,
      blockTime: tx.blockTime,
      confirmationStatus: 'finalized',
    });
    expect(entries.map((e) => e.confirmationStatus)).toEqual([
      'confirmed',
      'confirmed',
      'finalized',
      'finalized',
      'finalized',
    ]);
    expect((await list({ commitment: 'finalized' })).map((e) => e.signature)).toEqual([
      sig(2),
      sig(1),
      sig(0),
    ]);
  });

  it('pages with limit and before (exclusive), stops at until (exclusive)', async () => {
    expect((await list({ limit: 2 })).map((e) => e.signature)).toEqual([sig(2), sig(1)]);
    expect((await list({ limit: 2, before: sig(1) })).map((e) => e.signature)).toEqual([sig(0)]);
    expect((await list({ commitment: 'confirmed', until: sig(1) })).map((e) => e.signature)).toEqual([
      sig(4),
      sig(3),
      sig(2),
    ]);
    const unknown = (await cases.solDeposit(world, 2n)).tx.signature;
    expect(await list({ before: unknown })).toEqual([]);
    expect(
      (await post(call('getSignaturesForAddress', [world.treasury.address, { limit: 1001 }]))).body.error,
    ).toEqual({
      code: -32602,
      message: 'Invalid limit; max 1000',
    });
  });

  it('the memo as "[length] text"', async () => {
    const c = await cases.solanaPayUsdcDeposit(world, 1_000_000n, 'order-42');
    rpc.publish(c.tx);
    const [newest] = (await post(call('getSignaturesForAddress', [c.reference]))).body.result;
    expect(newest).toMatchObject({ signature: c.tx.signature, memo: '[8] order-42' });
  });
});
