import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SolanaRpc } from '../../src/deposits/rpc.js';
import { createSolanaRpcClient, type RetryEvent } from '../../src/deposits/rpc-client.js';
import { type Cursors, depositsAt, scanTreasury } from '../../src/deposits/scan.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import * as cases from '../helpers/solana/cases.js';
import type { ExecutedTransaction } from '../helpers/solana/chain.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

let world: DepositWorld;
let rpc: FakeSolanaRpc;
let client: SolanaRpc;
let retries: RetryEvent[];
let treasury: Treasury;

const PAGE = 3;
const none = (): Cursors => ({});
const signatures = (list: { signature: string }[]) => list.map((s) => s.signature);

beforeEach(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  retries = [];
  client = createSolanaRpcClient({
    url: rpc.url,
    timeoutMs: 10_000,
    maxAttempts: 4,
    batchSize: 4,
    sleep: async () => {},
    onRetry: (e) => retries.push(e),
  });
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
});

afterEach(async () => {
  await rpc.close();
});

/** Publishes `n` SOL deposits (finalized unless told otherwise) and returns their transactions. */
async function solDeposits(n: number, options?: { finalized?: boolean; orphaned?: boolean }) {
  const out: ExecutedTransaction[] = [];
  for (let i = 0; i < n; i++) {
    const tx = (await cases.solDeposit(world, 1_000_000n + BigInt(i))).tx;
    rpc.publish(tx, options);
    out.push(tx);
  }
  return out;
}

describe('scanTreasury', () => {
  it('pages newest-first over more than one page and returns everything oldest first, each once', async () => {
    const first = await cases.usdcDepositCreatingAccount(world, 2_000_000n); // names wallet and USDC account
    rpc.publish(first.tx);
    const sol = await solDeposits(7);
    const usdc = await cases.usdcCheckedDeposit(world, 3_000_000n); // names only the USDC account
    rpc.publish(usdc.tx);
    const result = await scanTreasury(client, treasury, none(), PAGE);
    expect(signatures(result.creditable)).toEqual([
      first.tx.signature,
      ...signatures(sol),
      usdc.tx.signature,
    ]);
    expect(result.pending).toEqual([]);
    expect(result.cursors).toEqual({
      [treasury.wallet]: sol[6]?.signature,
      [treasury.usdcAccount]: usdc.tx.signature,
    });
    // The wallet's 8 signatures took 3 pages of 3 (the last short); each page after the first
    // continued strictly before the previous page's last signature.
    const walletPages = rpc.callsOf('getSignaturesForAddress').filter((c) => c.params[0] === treasury.wallet);
    expect(walletPages.map((c) => (c.params[1] as { before?: string }).before)).toEqual([
      undefined,
      sol[4]?.signature,
      sol[1]?.signature,
    ]);
  });

  it('resumes from its cursors: only what is newer, and nothing when nothing is', async () => {
    await solDeposits(4);
    const before = await scanTreasury(client, treasury, none(), PAGE);
    const later = await solDeposits(2);
    const resumed = await scanTreasury(client, treasury, before.cursors, PAGE);
    expect(signatures(resumed.creditable)).toEqual(signatures(later));
    const calls = rpc.callsOf('getSignaturesForAddress').slice(-2);
    expect(calls.map((c) => (c.params[1] as { until?: string }).until)).toEqual([
      before.cursors[treasury.wallet],
      undefined,
    ]);
    const idle = await scanTreasury(client, treasury, resumed.cursors, PAGE);
    expect(idle).toEqual({ creditable: [], pending: [], cursors: resumed.cursors });
  });

  it('rides through 429s and transient JSON-RPC errors while paging, with the same answer', async () => {
    const sol = await solDeposits(5);
    rpc.failNext(
      { kind: 'http', status: 429, headers: { 'retry-after': '1' } },
      2,
      'getSignaturesForAddress',
    );
    rpc.failNext({ kind: 'rpc-error', code: -32016, message: 'Minimum context slot has not been reached' });
    const result = await scanTreasury(client, treasury, none(), PAGE);
    expect(signatures(result.creditable)).toEqual(signatures(sol));
    expect(retries.map((r) => r.error.kind)).toEqual(['rate_limited', 'rate_limited', 'rpc_error']);
  });

  it('fails the scan (cursors untouched by the caller) on a permanent JSON-RPC error', async () => {
    await solDeposits(2);
    rpc.failNext({ kind: 'rpc-error', code: -32602, message: 'Invalid params' });
    await expect(scanTreasury(client, treasury, none(), PAGE)).rejects.toMatchObject({ kind: 'rpc_error' });
  });

  it('confirmed then finalized: pending first, creditable once finalised, the cursor never passing a pending one', async () => {
    const settled = await solDeposits(2);
    const fresh = await solDeposits(2, { finalized: false });
    const first = await scanTreasury(client, treasury, none(), PAGE);
    expect(signatures(first.creditable)).toEqual(signatures(settled));
    expect(signatures(first.pending)).toEqual(signatures(fresh));
    expect(first.cursors[treasury.wallet]).toBe(settled[1]?.signature);

    rpc.ledger.finalizeThrough(fresh[1]?.slot as number);
    const second = await scanTreasury(client, treasury, first.cursors, PAGE);
    expect(signatures(second.creditable)).toEqual(signatures(fresh));
    expect(second.pending).toEqual([]);
  });

  it('a transaction that never finalises is pending, then simply gone', async () => {
    const orphan = await solDeposits(1, { orphaned: true });
    const first = await scanTreasury(client, treasury, none(), PAGE);
    expect(signatures(first.pending)).toEqual(signatures(orphan));
    expect(first.creditable).toEqual([]);
    const next = await solDeposits(1);
    const second = await scanTreasury(client, treasury, first.cursors, PAGE);
    expect(signatures(second.creditable)).toEqual(signatures(next));
    expect(second.pending).toEqual([]);
  });
});

describe('depositsAt', () => {
  it('the deposits of a poll in one list, failed transactions skipped without a call; a rescan finds the same references', async () => {
    const failed = await cases.failedUsdcDeposit(world, 1_000_000n, 5_000_000n);
    const created = await cases.usdcDepositCreatingAccount(world, 2_000_000n);
    const two = await cases.twoDeposits(world, 4_000_000n, 30_000_000n);
    const inner = await cases.innerUsdcDeposit(world, 1_500_000n);
    for (const c of [failed, created, two, inner]) rpc.publish(c.tx);
    const scan = await scanTreasury(client, treasury, none(), PAGE);
    expect(scan.creditable.map((s) => s.failed)).toContain(true);
    const calls = rpc.callsOf('getTransaction').length;
    const { deposits, unreadable } = await depositsAt(client, treasury, scan.creditable, 'finalized');
    expect(unreadable).toEqual([]);
    const expected = [
      `sol:${created.tx.signature}:1`,
      `sol:${two.tx.signature}:0`,
      `sol:${two.tx.signature}:1`,
      `sol:${inner.tx.signature}:0.0`,
    ];
    expect(deposits.map((d) => d.reference)).toEqual(expected);
    const fetched = rpc
      .callsOf('getTransaction')
      .slice(calls)
      .map((c) => c.params[0]);
    expect(fetched).not.toContain(failed.tx.signature);

    const rescan = await scanTreasury(client, treasury, none(), PAGE);
    expect(
      (await depositsAt(client, treasury, rescan.creditable, 'finalized')).deposits.map((d) => d.reference),
    ).toEqual(expected);
  });

  it('pending deposits read at confirmed; one whose fork vanished in between is skipped, a missing finalized one fails', async () => {
    const pending = await cases.solDeposit(world, 9_000_000n);
    rpc.publish(pending.tx, { finalized: false });
    const scan = await scanTreasury(client, treasury, none(), PAGE);
    expect(
      (await depositsAt(client, treasury, scan.pending, 'confirmed')).deposits.map((d) => d.amount),
    ).toEqual([9_000_000n]);

    const ghost = {
      signature: (await cases.solDeposit(world, 1n)).tx.signature,
      slot: 1,
      blockTime: null,
      failed: false,
    };
    expect(await depositsAt(client, treasury, [ghost], 'confirmed')).toEqual({
      deposits: [],
      unreadable: [],
    });
    await expect(depositsAt(client, treasury, [ghost], 'finalized')).rejects.toMatchObject({
      kind: 'bad_response',
    });
  });
});
