import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { transactionErrorJson } from './errors.js';
import { readTokenAccount, TOKEN_PROGRAM_IDS } from './token-accounts.js';

/** The first slot the local chain writes to, so slots look like mainnet's (nine digits). */
const FIRST_SLOT = 335_501_800n;
/** Unix seconds of FIRST_SLOT; each slot then lasts 400 ms, as on mainnet. */
const FIRST_BLOCK_TIME = 1_745_463_600;
/** Bytes before the first address in an address lookup table account. */
const LOOKUP_TABLE_HEADER = 56;

/** A token balance as the runtime records it: raw, before the RPC encodes it for a reader. */
export interface RawTokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

/** An instruction as the message (or the runtime, for inner ones) compiles it: indices into the keys. */
export interface CompiledInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

/**
 * One executed transaction: its signed bytes and what the runtime recorded about its execution
 * (the analogue of a validator's TransactionStatusMeta). The fake RPC encodes it per request.
 */
export interface ExecutedTransaction {
  signature: string;
  signatures: string[];
  version: 'legacy' | 0;
  header: {
    numSignerAccounts: number;
    numReadonlySignerAccounts: number;
    numReadonlyNonSignerAccounts: number;
  };
  staticKeys: string[];
  loadedAddresses: { writable: string[]; readonly: string[] };
  addressTableLookups: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[];
  recentBlockhash: string;
  instructions: CompiledInstruction[];
  slot: number;
  blockTime: number;
  meta: {
    /** Solana's TransactionError JSON, or null when the transaction succeeded. */
    err: unknown;
    fee: bigint;
    preBalances: bigint[];
    postBalances: bigint[];
    preTokenBalances: RawTokenBalance[];
    postTokenBalances: RawTokenBalance[];
    innerInstructions: { index: number; instructions: (CompiledInstruction & { stackHeight: number })[] }[];
    logMessages: string[];
    computeUnitsConsumed: bigint;
  };
}

export interface SendOptions {
  version?: 'legacy' | 0;
  /** Lookup tables the message may draw addresses from (v0 only): table address → its addresses. */
  lookupTables?: Record<Address, Address[]>;
  /** Extra signers beyond the fee payer and the instructions' own. */
  signers?: TransactionSigner[];
}

/**
 * A local Solana chain: LiteSVM running the real System, SPL Token, Token-2022 and Associated Token
 * Account programs in-process. Transactions are built with @solana/kit, signed with real keys and
 * executed for real; each one lands in its own slot.
 */
export class LocalChain {
  readonly svm: LiteSVM;
  private slot = FIRST_SLOT;
  private readonly mintDecimals = new Map<string, number>();

  constructor() {
    this.svm = new LiteSVM();
    this.svm.warpToSlot(this.slot);
    this.setClock();
  }

  /** A new wallet holding `sol` lamports. */
  async wallet(sol = 100_000_000_000n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner();
    if (sol > 0n) this.svm.airdrop(signer.address, lamports(sol));
    return signer;
  }

  currentSlot(): number {
    return Number(this.slot);
  }

  /** Decimals of a mint that exists on this chain. */
  decimalsOf(mint: string): number {
    const known = this.mintDecimals.get(mint);
    if (known !== undefined) return known;
    const account = this.svm.getAccount(address(mint));
    if (!account.exists) throw new Error(`no mint ${mint}`);
    const decimals = account.data[44] as number;
    this.mintDecimals.set(mint, decimals);
    return decimals;
  }

  /** Executes a transaction and records it; a failed one is recorded too (with its error), as on chain. */
  async send(feePayer: TransactionSigner, instructions: Instruction[], options: SendOptions = {}) {
    const version = options.version ?? 0;
    const blockhash = this.svm.latestBlockhash();
    const base = pipe(
      createTransactionMessage({ version }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 0n }, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const message =
      options.lookupTables && version === 0
        ? compressTransactionMessageUsingAddressLookupTables(
            base as typeof base & { version: 0 },
            options.lookupTables,
          )
        : base;
    const transaction = await signTransactionMessageWithSigners(message);
    const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    // Version 1 messages (not yet on mainnet) are never built here.
    if (compiled.version === 1) throw new Error('version 1 messages are not supported');
    const staticKeys = compiled.staticAccounts.map(String);
    const lookups = 'addressTableLookups' in compiled ? (compiled.addressTableLookups ?? []) : [];
    const loadedAddresses = { writable: [] as string[], readonly: [] as string[] };
    for (const lookup of lookups) {
      const table = this.lookupTableAddresses(lookup.lookupTableAddress);
      for (const i of lookup.writableIndexes) loadedAddresses.writable.push(table[i] as string);
      for (const i of lookup.readonlyIndexes) loadedAddresses.readonly.push(table[i] as string);
    }
    const keys = [...staticKeys, ...loadedAddresses.writable, ...loadedAddresses.readonly];
    const programIndices = new Set(compiled.instructions.map((ix) => ix.programAddressIndex));
    const pre = this.snapshot(keys, programIndices);
    const result = this.svm.sendTransaction(transaction);
    const post = this.snapshot(keys, programIndices);
    const failed = result instanceof FailedTransactionMetadata;
    const outcome = failed ? result.meta() : result;
    const fee = pre.lamports.reduce((a, b) => a + b, 0n) - post.lamports.reduce((a, b) => a + b, 0n);
    const base58 = getBase58Decoder();
    const signatures = Object.values(transaction.signatures).map((s) => (s ? base58.decode(s) : ''));
    const executed: ExecutedTransaction = {
      signature: getSignatureFromTransaction(transaction),
      signatures,
      version: compiled.version === 'legacy' ? 'legacy' : 0,
      header: compiled.header,
      staticKeys,
      loadedAddresses,
      addressTableLookups: lookups.map((l) => ({
        accountKey: l.lookupTableAddress,
        writableIndexes: [...l.writableIndexes],
        readonlyIndexes: [...l.readonlyIndexes],
      })),
      recentBlockhash: blockhash,
      instructions: compiled.instructions.map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: new Uint8Array(ix.data ?? []),
      })),
      slot: Number(this.slot),
      blockTime: this.blockTime(),
      meta: {
        err: failed ? transactionErrorJson(result.err()) : null,
        fee,
        preBalances: pre.lamports,
        postBalances: post.lamports,
        preTokenBalances: pre.tokens,
        postTokenBalances: post.tokens,
        innerInstructions: outcome
          .innerInstructions()
          .map((list, index) => ({
            index,
            instructions: list.map((inner) => {
              const ix = inner.instruction();
              return {
                programIdIndex: ix.programIdIndex(),
                accounts: [...ix.accounts()],
                data: new Uint8Array(ix.data()),
                stackHeight: inner.stackHeight(),
              };
            }),
          }))
          .filter((entry) => entry.instructions.length > 0),
        logMessages: outcome.logs(),
        computeUnitsConsumed: outcome.computeUnitsConsumed(),
      },
    };
    this.nextSlot();
    return executed;
  }

  /** Moves to the next slot with a fresh blockhash (so an identical transaction is a new one). */
  private nextSlot(): void {
    this.slot += 1n;
    this.svm.warpToSlot(this.slot);
    this.svm.expireBlockhash();
    this.setClock();
  }

  private blockTime(): number {
    return FIRST_BLOCK_TIME + Math.floor((Number(this.slot - FIRST_SLOT) * 400) / 1000);
  }

  private setClock(): void {
    const clock = this.svm.getClock();
    clock.unixTimestamp = BigInt(this.blockTime());
    this.svm.setClock(clock);
  }

  private lookupTableAddresses(table: Address): string[] {
    const account = this.svm.getAccount(table);
    if (!account.exists) throw new Error(`no lookup table ${table}`);
    const decoder = getAddressDecoder();
    const out: string[] = [];
    for (let at = LOOKUP_TABLE_HEADER; at + 32 <= account.data.length; at += 32) {
      out.push(decoder.decode(account.data.slice(at, at + 32)));
    }
    return out;
  }

  /**
   * Lamports of every key, and the token balances of the token accounts among them (programs the
   * message invokes are skipped, as the validator skips them).
   */
  private snapshot(keys: string[], programIndices: Set<number>) {
    const lamportsOf: bigint[] = [];
    const tokens: RawTokenBalance[] = [];
    keys.forEach((key, index) => {
      const account = this.svm.getAccount(address(key));
      lamportsOf.push(account.exists ? account.lamports : 0n);
      if (!account.exists || programIndices.has(index)) return;
      if (!TOKEN_PROGRAM_IDS.has(account.programAddress)) return;
      const token = readTokenAccount(account.data);
      if (!token) return;
      tokens.push({
        accountIndex: index,
        mint: token.mint,
        owner: token.owner,
        programId: account.programAddress,
        amount: token.amount,
        decimals: this.decimalsOf(token.mint),
      });
    });
    return { lamports: lamportsOf, tokens };
  }
}
