import { address } from '@solana/kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeBase58 } from '../../src/lib/base58.js';
import * as cases from '../helpers/solana/cases.js';
import { encodeJsonParsed } from '../helpers/solana/json-parsed.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * The fake RPC's jsonParsed encoder, checked field by field against what a Solana node returns
 * (agave's transaction-status crate; the fields docs/deposits.md#what-a-deposit-is reads) for real
 * executed transactions. Amounts and balances below are worked out by hand: a fresh wallet holds
 * 100 SOL, the treasury 1 SOL, the fee is 5,000 lamports per signature, a 165-byte token account's rent is 2,039,280 lamports.
 */
const SYSTEM = '11111111111111111111111111111111';
const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const ATA = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const HUNDRED_SOL = 100_000_000_000;
const ONE_SOL = 1_000_000_000;

type Encoded = ReturnType<typeof encodeJsonParsed>;
const keyFlags = (tx: Encoded) =>
  Object.fromEntries(
    tx.transaction.message.accountKeys.map((k) => [k.pubkey, [k.writable, k.signer, k.source]]),
  );

let world: DepositWorld;
beforeAll(async () => {
  world = await DepositWorld.create();
});

describe('jsonParsed encoding of real transactions', () => {
  it('a SOL transfer: the whole result', async () => {
    const c = await cases.solDeposit(world, 250_000_000n);
    const treasury = world.treasury.address;
    expect(encodeJsonParsed(c.tx)).toEqual({
      slot: c.tx.slot,
      blockTime: c.tx.blockTime,
      version: 0,
      transaction: {
        signatures: [c.tx.signature],
        message: {
          accountKeys: [
            { pubkey: c.sender, writable: true, signer: true, source: 'transaction' },
            { pubkey: treasury, writable: true, signer: false, source: 'transaction' },
            { pubkey: SYSTEM, writable: false, signer: false, source: 'transaction' },
          ],
          recentBlockhash: c.tx.recentBlockhash,
          instructions: [
            {
              program: 'system',
              programId: SYSTEM,
              parsed: {
                type: 'transfer',
                info: { source: c.sender, destination: treasury, lamports: 250_000_000 },
              },
              stackHeight: null,
            },
          ],
          addressTableLookups: [],
        },
      },
      meta: {
        err: null,
        status: { Ok: null },
        fee: 5000,
        preBalances: [HUNDRED_SOL, ONE_SOL, 1],
        postBalances: [HUNDRED_SOL - 250_000_000 - 5000, ONE_SOL + 250_000_000, 1],
        innerInstructions: [],
        logMessages: [`Program ${SYSTEM} invoke [1]`, `Program ${SYSTEM} success`],
        preTokenBalances: [],
        postTokenBalances: [],
        rewards: [],
        computeUnitsConsumed: 150,
      },
    });
  });

  it('a legacy message: version "legacy", no addressTableLookups', async () => {
    const sender = await world.user();
    const tx = await world.chain.send(sender, [world.solTransfer(sender, world.treasury.address, 1000n)], {
      version: 'legacy',
    });
    const encoded = encodeJsonParsed(tx);
    expect(encoded.version).toBe('legacy');
    expect(encoded.transaction.message).not.toHaveProperty('addressTableLookups');
  });

  it('transferChecked with the recipient account created first: ATA create and its CPIs, token balances', async () => {
    const c = await cases.usdcDepositCreatingAccount(world, 5_000_000n);
    const encoded = encodeJsonParsed(c.tx);
    const treasury = world.treasury.address;
    const treasuryUsdc = await world.treasuryUsdc();
    const senderUsdc = await world.ata(address(c.sender));
    expect(keyFlags(encoded)).toEqual({
      [c.sender]: [true, true, 'transaction'],
      [treasuryUsdc]: [true, false, 'transaction'],
      [senderUsdc]: [true, false, 'transaction'],
      [treasury]: [false, false, 'transaction'],
      [USDC_MINT]: [false, false, 'transaction'],
      [SYSTEM]: [false, false, 'transaction'],
      [TOKEN]: [false, false, 'transaction'],
      [ATA]: [false, false, 'transaction'],
    });
    expect(encoded.transaction.message.instructions).toEqual([
      {
        program: 'spl-associated-token-account',
        programId: ATA,
        parsed: {
          type: 'createIdempotent',
          info: {
            source: c.sender,
            account: treasuryUsdc,
            wallet: treasury,
            mint: USDC_MINT,
            systemProgram: SYSTEM,
            tokenProgram: TOKEN,
          },
        },
        stackHeight: null,
      },
      {
        program: 'spl-token',
        programId: TOKEN,
        parsed: {
          type: 'transferChecked',
          info: {
            source: senderUsdc,
            mint: USDC_MINT,
            destination: treasuryUsdc,
            tokenAmount: { uiAmount: 5, decimals: 6, amount: '5000000', uiAmountString: '5' },
            authority: c.sender,
          },
        },
        stackHeight: null,
      },
    ]);
    const spl = (type: string, info: object) => ({
      program: 'spl-token',
      programId: TOKEN,
      parsed: { type, info },
      stackHeight: 2,
    });
    expect(encoded.meta.innerInstructions).toEqual([
      {
        index: 0,
        instructions: [
          spl('getAccountDataSize', { mint: USDC_MINT, extensionTypes: ['immutableOwner'] }),
          {
            program: 'system',
            programId: SYSTEM,
            parsed: {
              type: 'createAccount',
              info: {
                source: c.sender,
                newAccount: treasuryUsdc,
                lamports: 2_039_280,
                space: 165,
                owner: TOKEN,
              },
            },
            stackHeight: 2,
          },
          spl('initializeImmutableOwner', { account: treasuryUsdc }),
          spl('initializeAccount3', { account: treasuryUsdc, mint: USDC_MINT, owner: treasury }),
        ],
      },
    ]);
    const index = (key: string) => encoded.transaction.message.accountKeys.findIndex((k) => k.pubkey === key);
    const balance = (key: string, owner: string, amount: string, uiAmount: number | null, ui: string) => ({
      accountIndex: index(key),
      mint: USDC_MINT,
      uiTokenAmount: { uiAmount, decimals: 6, amount, uiAmountString: ui },
      owner,
      programId: TOKEN,
    });
    // The treasury's account did not exist before: no pre balance. A zero balance has uiAmount null.
    expect(encoded.meta.preTokenBalances).toEqual([balance(senderUsdc, c.sender, '5000000', 5, '5')]);
    expect(encoded.meta.postTokenBalances).toEqual(
      [
        balance(treasuryUsdc, treasury, '5000000', 5, '5'),
        balance(senderUsdc, c.sender, '0', null, '0'),
      ].sort((a, b) => a.accountIndex - b.accountIndex),
    );
    expect(encoded.meta.fee).toBe(5000);
    // The payer paid the fee and the new account's rent; the new account holds the rent.
    const pre = encoded.meta.preBalances;
    const post = encoded.meta.postBalances;
    expect((pre[index(c.sender)] as number) - (post[index(c.sender)] as number)).toBe(5000 + 2_039_280);
    expect([pre[index(treasuryUsdc)], post[index(treasuryUsdc)]]).toEqual([0, 2_039_280]);
  });

  it('a failed transfer: err and status, fee charged, balances otherwise unchanged', async () => {
    const c = await cases.failedUsdcDeposit(world, 1_000_000n, 2_000_000n);
    const encoded = encodeJsonParsed(c.tx);
    expect(encoded.meta.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(encoded.meta.status).toEqual({ Err: { InstructionError: [0, { Custom: 1 }] } });
    expect(encoded.meta.logMessages).toContain('Program log: Error: insufficient funds');
    expect(encoded.meta.postTokenBalances).toEqual(encoded.meta.preTokenBalances);
    expect(encoded.meta.postBalances[0]).toBe((encoded.meta.preBalances[0] as number) - 5000);
  });

  it('Solana Pay: memo parsed as its text; the reference read as a multisig signer of transferChecked', async () => {
    const c = await cases.solanaPayUsdcDeposit(world, 7_000_000n, 'order-42');
    const encoded = encodeJsonParsed(c.tx);
    const [memo, transfer] = encoded.transaction.message.instructions;
    expect(memo).toEqual({
      program: 'spl-memo',
      programId: 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
      parsed: 'order-42',
      stackHeight: null,
    });
    expect(transfer).toMatchObject({
      parsed: { type: 'transferChecked', info: { multisigAuthority: c.sender, signers: [c.reference] } },
    });
    expect(keyFlags(encoded)[c.reference as string]).toEqual([false, false, 'transaction']);
  });

  it('Token-2022: program id TokenzQd…, the same spl-token parser, a 170-byte account with its extension', async () => {
    const c = await cases.otherMintTransfer(world, world.token2022Mint, 9_000_000n);
    const encoded = encodeJsonParsed(c.tx);
    expect(encoded.transaction.message.instructions[1]).toMatchObject({
      program: 'spl-token',
      programId: TOKEN_2022,
    });
    expect(encoded.meta.innerInstructions[0]?.instructions[1]).toMatchObject({
      parsed: { type: 'createAccount', info: { lamports: 2_074_080, space: 170, owner: TOKEN_2022 } },
    });
    expect(encoded.meta.postTokenBalances.map((b) => b.programId)).toEqual([TOKEN_2022, TOKEN_2022]);
  });

  it('an inner transferChecked from recoverNested: parsed with stackHeight 2, the closed account gone after', async () => {
    const c = await cases.innerUsdcDeposit(world, 3_000_000n);
    const encoded = encodeJsonParsed(c.tx);
    const owner = await world.ata(world.treasury.address, world.otherMint);
    const nested = await world.ata(owner);
    expect(encoded.transaction.message.instructions[0]).toMatchObject({
      program: 'spl-associated-token-account',
      parsed: {
        type: 'recoverNested',
        info: { nestedSource: nested, nestedOwner: owner, wallet: world.treasury.address },
      },
    });
    expect(encoded.meta.innerInstructions).toEqual([
      {
        index: 0,
        instructions: [
          expect.objectContaining({
            parsed: expect.objectContaining({ type: 'transferChecked' }),
            stackHeight: 2,
          }),
          expect.objectContaining({
            parsed: expect.objectContaining({ type: 'closeAccount' }),
            stackHeight: 2,
          }),
        ],
      },
    ]);
    const nestedIndex = encoded.transaction.message.accountKeys.findIndex((k) => k.pubkey === nested);
    expect(encoded.meta.preTokenBalances.some((b) => b.accountIndex === nestedIndex)).toBe(true);
    expect(encoded.meta.postTokenBalances.some((b) => b.accountIndex === nestedIndex)).toBe(false);
  });

  it('a token batch: parsed as {type: "batch", info: {instructions}}, each with its own accounts', async () => {
    const payer = await world.user();
    await world.openAta(payer, world.treasury.address);
    const c = await cases.batchedUsdcDeposits(world, 1_000_000n, 250_000n);
    const senderUsdc = await world.ata(address(c.sender));
    const treasuryUsdc = await world.treasuryUsdc();
    const transfer = (amount: string, uiAmount: number, ui: string) => ({
      type: 'transferChecked',
      info: {
        source: senderUsdc,
        mint: USDC_MINT,
        destination: treasuryUsdc,
        tokenAmount: { uiAmount, decimals: 6, amount, uiAmountString: ui },
        authority: c.sender,
      },
    });
    expect(encodeJsonParsed(c.tx).transaction.message.instructions[1]).toEqual({
      program: 'spl-token',
      programId: TOKEN,
      parsed: {
        type: 'batch',
        info: { instructions: [transfer('1000000', 1, '1'), transfer('250000', 0.25, '0.25')] },
      },
      stackHeight: null,
    });
  });

  it('a program Solana does not parse: programId, accounts and base58 data', async () => {
    const payer = await world.user();
    // ComputeBudget SetComputeUnitLimit(200_000): tag 2, then the limit as u32 little-endian.
    const data = new Uint8Array([2, 0x40, 0x0d, 0x03, 0x00]);
    const tx = await world.chain.send(payer, [
      { programAddress: address('ComputeBudget111111111111111111111111111111'), accounts: [], data },
      world.solTransfer(payer, world.treasury.address, 1000n),
    ]);
    const [budget] = encodeJsonParsed(tx).transaction.message.instructions;
    expect(budget).toEqual({
      programId: 'ComputeBudget111111111111111111111111111111',
      accounts: [],
      data: expect.any(String),
      stackHeight: null,
    });
    expect(decodeBase58((budget as { data: string }).data)).toEqual(data);
  });
});
