import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Deposit, depositsOf } from '../../src/deposits/deposits.js';
import type { ParsedTransaction, SolanaRpc } from '../../src/deposits/rpc.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * depositsOf on real transactions: each case is built with real keys, executed by the real
 * programs in LiteSVM, published to the fake RPC, and read back through the production client —
 * so the parser sees exactly what a Solana node would send.
 */
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let client: SolanaRpc;
let treasury: Treasury;

async function read(c: cases.DepositCase): Promise<ParsedTransaction> {
  rpc.publish(c.tx);
  const [tx] = await client.getTransactions([c.tx.signature], 'finalized');
  if (!tx || 'unreadable' in tx) throw new Error('not served');
  return tx;
}

async function depositsFor(c: cases.DepositCase): Promise<Deposit[]> {
  return depositsOf(await read(c), treasury);
}

function expected(c: cases.DepositCase, fields: Partial<Deposit> & Pick<Deposit, 'instruction'>): Deposit {
  return {
    reference: `sol:${c.tx.signature}:${fields.instruction}`,
    signature: c.tx.signature,
    slot: c.tx.slot,
    blockTime: c.tx.blockTime,
    sourceOwner: null,
    ...fields,
  } as Deposit;
}

beforeAll(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  client = createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 1, batchSize: 100 });
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
});

afterAll(async () => {
  await rpc.close();
});

describe('depositsOf', () => {
  // First: the treasury has no USDC account until this transaction creates it.
  it('a USDC deposit that creates the treasury USDC account in the same transaction (no pre balance)', async () => {
    const c = await cases.usdcDepositCreatingAccount(world, 5_000_000n);
    const tx = await read(c);
    const account = tx.transaction.message.accountKeys.findIndex((k) => k.pubkey === treasury.usdcAccount);
    expect(tx.meta.preTokenBalances?.some((b) => b.accountIndex === account)).toBe(false);
    expect(depositsOf(tx, treasury)).toEqual([
      expected(c, {
        instruction: '1',
        asset: 'USDC',
        amount: 5_000_000n,
        decimals: 6,
        sender: c.sender,
        sourceOwner: c.sender,
        accounts: [await world.ata(c.sender), USDC_MINT, treasury.usdcAccount, c.sender],
      }),
    ]);
  });

  it('SOL: a system transfer to the treasury, from its source', async () => {
    const c = await cases.solDeposit(world, 250_000_000n);
    const [deposit] = await depositsFor(c);
    expect(deposit).toEqual(
      expected(c, {
        instruction: '0',
        asset: 'SOL',
        amount: 250_000_000n,
        decimals: 9,
        sender: c.sender,
        accounts: [c.sender, world.treasury.address, '11111111111111111111111111111111'],
      }),
    );
  });

  it('USDC transferChecked: mint from the instruction, sender its authority', async () => {
    const c = await cases.usdcCheckedDeposit(world, 12_345_678n);
    expect(await depositsFor(c)).toMatchObject([
      {
        instruction: '0',
        asset: 'USDC',
        amount: 12_345_678n,
        decimals: 6,
        sender: c.sender,
        sourceOwner: c.sender,
      },
    ]);
  });

  it('USDC plain transfer (no mint in the instruction): mint and decimals from the token balances', async () => {
    const c = await cases.usdcPlainDeposit(world, 2_000_000n);
    const tx = await read(c);
    const parsed = tx.transaction.message.instructions[0]?.parsed as { type: string; info: object };
    expect(parsed.type).toBe('transfer');
    expect(parsed.info).not.toHaveProperty('mint');
    expect(depositsOf(tx, treasury)).toEqual([
      expected(c, {
        instruction: '0',
        asset: 'USDC',
        amount: 2_000_000n,
        decimals: 6,
        sender: c.sender,
        sourceOwner: c.sender,
        accounts: [await world.ata(c.sender), treasury.usdcAccount, c.sender],
      }),
    ]);
  });

  it('a transfer inside an inner (CPI) instruction: reference <outer>.<inner>', async () => {
    const c = await cases.innerUsdcDeposit(world, 3_000_000n);
    const tx = await read(c);
    expect(tx.transaction.message.instructions).toHaveLength(1);
    const [deposit] = depositsOf(tx, treasury);
    const ownerAccount = await world.ata(world.treasury.address, world.otherMint);
    // The CPI's authority is the account that owned the nested account (a PDA the program signs
    // for), not a wallet: attribution falls to the reference key, else the operator.
    expect(deposit).toEqual(
      expected(c, {
        instruction: '0.0',
        asset: 'USDC',
        amount: 3_000_000n,
        decimals: 6,
        sender: ownerAccount,
        sourceOwner: ownerAccount,
        accounts: [await world.ata(ownerAccount), USDC_MINT, treasury.usdcAccount, ownerAccount],
      }),
    );
  });

  it('two transfers in one transaction: one deposit per instruction, each its own reference', async () => {
    const c = await cases.twoDeposits(world, 4_000_000n, 50_000_000n);
    const deposits = await depositsFor(c);
    expect(deposits.map((d) => [d.reference, d.asset, d.amount])).toEqual([
      [`sol:${c.tx.signature}:0`, 'USDC', 4_000_000n],
      [`sol:${c.tx.signature}:1`, 'SOL', 50_000_000n],
    ]);
  });

  it('a token batch of two transfers: one deposit each, reference <instruction>#<k>', async () => {
    const c = await cases.batchedUsdcDeposits(world, 1_100_000n, 2_200_000n);
    const tx = await read(c);
    expect(tx.transaction.message.instructions[1]?.parsed).toMatchObject({ type: 'batch' });
    expect(tx.meta.innerInstructions).toEqual([]);
    expect(depositsOf(tx, treasury).map((d) => [d.reference, d.amount, d.sender])).toEqual([
      [`sol:${c.tx.signature}:1#0`, 1_100_000n, c.sender],
      [`sol:${c.tx.signature}:1#1`, 2_200_000n, c.sender],
    ]);
  });

  it('a transfer to another address in the same transaction is not ours', async () => {
    const c = await cases.depositBesideOtherTransfer(world, 6_000_000n, 70_000_000n);
    expect((await depositsFor(c)).map((d) => [d.instruction, d.asset, d.amount])).toEqual([
      ['1', 'SOL', 70_000_000n],
    ]);
  });

  it('a failed transaction yields nothing', async () => {
    const c = await cases.failedUsdcDeposit(world, 1_000_000n, 2_000_000n);
    const tx = await read(c);
    expect(tx.meta.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(depositsOf(tx, treasury)).toEqual([]);
  });

  it('Token-2022 and other mints are not USDC: nothing', async () => {
    const t22 = await cases.otherMintTransfer(world, world.token2022Mint, 9_000_000n);
    const other = await cases.otherMintTransfer(world, world.otherMint, 9_000_000n);
    expect(await depositsFor(t22)).toEqual([]);
    expect(await depositsFor(other)).toEqual([]);
  });

  it('dust is still a deposit here (the value rule ignores it)', async () => {
    const c = await cases.solDeposit(world, 1_000n);
    expect((await depositsFor(c)).map((d) => d.amount)).toEqual([1_000n]);
  });

  it('Solana Pay USDC: the reference among the instruction accounts, the payer as sender', async () => {
    const c = await cases.solanaPayUsdcDeposit(world, 7_000_000n, 'order-42');
    const tx = await read(c);
    // A key appended to transferChecked makes the RPC read the authority as a multisig.
    const { parsed } = tx.transaction.message.instructions[1] as {
      parsed: { info: Record<string, unknown> };
    };
    const { info } = parsed;
    expect(info.multisigAuthority).toBe(c.sender);
    expect(info.signers).toEqual([c.reference]);
    const [deposit] = depositsOf(tx, treasury);
    expect(deposit?.instruction).toBe('1');
    expect(deposit?.sender).toBe(c.sender);
    expect(deposit?.accounts).toContain(c.reference);
  });

  it('Solana Pay SOL: the reference among the transaction read-only keys', async () => {
    const c = await cases.solanaPaySolDeposit(world, 80_000_000n);
    const [deposit] = await depositsFor(c);
    expect(deposit?.sender).toBe(c.sender);
    expect(deposit?.accounts).toContain(c.reference);
  });

  it('ignores transfers to other addresses entirely: the treasury set-up itself is no deposit', async () => {
    const payer = await world.user();
    const setup = await world.openAta(payer, world.treasury.address, world.otherMint);
    rpc.publish(setup);
    const [tx] = await client.getTransactions([setup.signature], 'finalized');
    expect(depositsOf(tx as ParsedTransaction, treasury)).toEqual([]);
  });

  it('a transfer whose parsed form is not the documented shape fails loudly rather than being skipped', async () => {
    const c = await cases.solDeposit(world, 5_000_000n);
    const tx = structuredClone(await read(c));
    const ix = tx.transaction.message.instructions[0] as { parsed: { info: Record<string, unknown> } };
    ix.parsed.info.lamports = '5000000';
    expect(() => depositsOf(tx, treasury)).toThrow(/unexpected transfer info/);
    // A JSON number past 2^53 has already lost its last digits: refused, not rounded.
    ix.parsed.info.lamports = 2 ** 60;
    expect(() => depositsOf(tx, treasury)).toThrow(/lamports beyond 2\^53/);
  });
});
