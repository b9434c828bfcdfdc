import type { ExecutedTransaction, RawTokenBalance } from './chain.js';
import {
  type JsonParsedInstruction,
  parseInstruction,
  SYSTEM_PROGRAM,
  trimmedDecimal,
} from './parse-instruction.js';

export interface JsonParsedMessage {
  accountKeys: {
    pubkey: string;
    writable: boolean;
    signer: boolean;
    source: 'transaction' | 'lookupTable';
  }[];
  recentBlockhash: string;
  instructions: JsonParsedInstruction[];
  /** v0 messages only. */
  addressTableLookups?: ExecutedTransaction['addressTableLookups'];
}

const BPF_UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
/** Accounts the runtime never lets a transaction write (sysvars and builtin programs we meet). */
const RESERVED = new Set([
  SYSTEM_PROGRAM,
  'SysvarRent111111111111111111111111111111111',
  'SysvarC1ock11111111111111111111111111111111',
  'ComputeBudget111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
]);

/** Every account key of the transaction: static keys, then those loaded from lookup tables. */
export function accountKeysOf(tx: ExecutedTransaction): string[] {
  return [...tx.staticKeys, ...tx.loadedAddresses.writable, ...tx.loadedAddresses.readonly];
}

/**
 * Writable as Solana's RPC reports it (agave `is_maybe_writable` / `LoadedMessage::is_writable`):
 * the header's or lookup's writable position, demoted for reserved accounts and for programs the
 * message invokes (unless the upgradeable loader is present).
 */
function writableFlags(tx: ExecutedTransaction, keys: string[]): boolean[] {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = tx.header;
  const staticCount = tx.staticKeys.length;
  const invoked = new Set(tx.instructions.map((ix) => ix.programIdIndex));
  const upgradeableLoaderPresent = keys.includes(BPF_UPGRADEABLE_LOADER);
  return keys.map((key, i) => {
    let writable: boolean;
    if (i < numSignerAccounts) writable = i < numSignerAccounts - numReadonlySignerAccounts;
    else if (i < staticCount) writable = i < staticCount - numReadonlyNonSignerAccounts;
    else writable = i < staticCount + tx.loadedAddresses.writable.length;
    if (RESERVED.has(key)) return false;
    if (invoked.has(i) && !upgradeableLoaderPresent) return false;
    return writable;
  });
}

/**
 * A transaction token balance as `getTransaction` returns it. `uiAmount` is null for a zero
 * balance: validators store the status meta as protobuf, whose decoding turns 0.0 into None.
 */
function uiTokenBalance(balance: RawTokenBalance) {
  const uiAmount = Number(balance.amount) / 10 ** balance.decimals;
  return {
    accountIndex: balance.accountIndex,
    mint: balance.mint,
    uiTokenAmount: {
      uiAmount: balance.amount === 0n ? null : uiAmount,
      decimals: balance.decimals,
      amount: balance.amount.toString(),
      uiAmountString: trimmedDecimal(balance.amount, balance.decimals),
    },
    owner: balance.owner,
    programId: balance.programId,
  };
}

/**
 * The `result` of `getTransaction(signature, {encoding: "jsonParsed", maxSupportedTransactionVersion: 0})`
 * for an executed transaction, shaped as agave's RPC shapes it: parsed account keys with
 * signer/writable/source, parsed outer instructions (`stackHeight` null, as validators record no
 * height for them), inner instructions with their heights, and a meta without `loadedAddresses`
 * (the jsonParsed encoding leaves it out: the keys already carry their source).
 */
export function encodeJsonParsed(tx: ExecutedTransaction) {
  const keys = accountKeysOf(tx);
  const writable = writableFlags(tx, keys);
  const message: JsonParsedMessage = {
    accountKeys: keys.map((pubkey, i) => ({
      pubkey,
      writable: writable[i] as boolean,
      signer: i < tx.header.numSignerAccounts,
      source: i < tx.staticKeys.length ? ('transaction' as const) : ('lookupTable' as const),
    })),
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => parseInstruction(ix, keys, null)),
  };
  if (tx.version === 0) message.addressTableLookups = tx.addressTableLookups;
  const err = tx.meta.err;
  return {
    slot: tx.slot,
    transaction: { signatures: tx.signatures, message },
    meta: {
      err,
      status: err === null ? { Ok: null } : { Err: err },
      fee: Number(tx.meta.fee),
      preBalances: tx.meta.preBalances.map(Number),
      postBalances: tx.meta.postBalances.map(Number),
      innerInstructions: tx.meta.innerInstructions.map((entry) => ({
        index: entry.index,
        instructions: entry.instructions.map((ix) => parseInstruction(ix, keys, ix.stackHeight)),
      })),
      logMessages: tx.meta.logMessages,
      preTokenBalances: tx.meta.preTokenBalances.map(uiTokenBalance),
      postTokenBalances: tx.meta.postTokenBalances.map(uiTokenBalance),
      rewards: [],
      computeUnitsConsumed: Number(tx.meta.computeUnitsConsumed),
    },
    version: tx.version,
    blockTime: tx.blockTime,
  };
}

export type JsonParsedTransaction = ReturnType<typeof encodeJsonParsed>;
