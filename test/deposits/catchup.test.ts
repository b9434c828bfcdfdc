import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { depositsAt, scanTreasury } from '../../src/deposits/scan.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import { transferChecked } from '../helpers/solana/cases.js';
import type { ExecutedTransaction } from '../helpers/solana/chain.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * Catching up a history: many real deposits (SOL and USDC alternately), read through paged
 * signatures and batched transactions. DEPOSIT_CATCHUP_N=10000 makes it the measurement quoted in
 * docs/deposits.md (printed, never asserted: no timing assertions here).
 */
const N = Number(process.env.DEPOSIT_CATCHUP_N ?? 240);
const PAGE = 100;

let world: DepositWorld;
let rpc: FakeSolanaRpc;
let treasury: Treasury;
let txs: ExecutedTransaction[];

beforeAll(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  const senders = [];
  for (let i = 0; i < 10; i++) senders.push(await world.user(10n ** 12n));
  const payer = senders[0] as (typeof senders)[number];
  rpc.publish(await world.openAta(payer, world.treasury.address));
  const treasuryUsdc = await world.treasuryUsdc();
  txs = [];
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const s = senders[i % senders.length] as (typeof senders)[number];
    const instruction =
      i % 2 === 0
        ? world.solTransfer(s, world.treasury.address, 10_000_000n + BigInt(i))
        : await transferChecked(world, s, treasuryUsdc, 1_000_000n + BigInt(i));
    const tx = await world.chain.send(s, [instruction]);
    txs.push(tx);
    rpc.publish(tx);
  }
  console.info(
    `built and published ${N} deposit transactions in ${Math.round(performance.now() - started)} ms`,
  );
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
}, 600_000);

afterAll(async () => {
  await rpc.close();
});

describe('catching up a history of deposits', () => {
  for (const batchSize of [100, 1]) {
    it(`finds every deposit once, in order (getTransaction batches of ${batchSize})`, async () => {
      const client = createSolanaRpcClient({ url: rpc.url, timeoutMs: 60_000, maxAttempts: 1, batchSize });
      const requests = rpc.httpRequests;
      const started = performance.now();
      const scan = await scanTreasury(client, treasury, {}, PAGE);
      const { deposits, unreadable } = await depositsAt(client, treasury, scan.creditable, 'finalized');
      expect(unreadable).toEqual([]);
      const seconds = (performance.now() - started) / 1000;
      console.info(`batch ${batchSize}: ${deposits.length} deposits in ${seconds.toFixed(2)} s`);
      expect(deposits.map((d) => d.signature)).toEqual(txs.map((t) => t.signature));
      expect(new Set(deposits.map((d) => d.reference)).size).toBe(N);
      expect(deposits.filter((d) => d.asset === 'USDC')).toHaveLength(Math.floor(N / 2));
      // Pages: the wallet's N/2 + 1 and the USDC account's N/2 + 1 signatures, PAGE at a time;
      // then one request per batch of transactions (the set-up transaction included).
      const pages = 2 * (Math.floor((N / 2 + 1) / PAGE) + 1);
      expect(rpc.httpRequests - requests).toBe(pages + Math.ceil((N + 1) / batchSize));
    });
  }
});
