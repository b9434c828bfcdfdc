import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  type JsonParsedInstruction,
  type ParsedTransaction,
  SolanaRpcError,
  type TokenBalance,
} from './rpc.js';
import { SYSTEM_PROGRAM, TOKEN_PROGRAM, type Treasury } from './treasury.js';

export type DepositAsset = 'SOL' | 'USDC';

/** One transfer to the treasury: what the ledger credits once, under `reference`. */
export interface Deposit {
  /** `sol:<signature>:<instruction>`: the unique deposit reference that makes crediting exactly-once. */
  reference: string;
  signature: string;
  /**
   * The instruction's index in the message (`"1"`), `<outer>.<inner>` for an inner one (`"0.1"`),
   * all from 0; `#<k>` after it for the k-th instruction of a token `batch` (`"2#1"`).
   */
  instruction: string;
  asset: DepositAsset;
  /** Base units: lamports for SOL, the mint's units for USDC. */
  amount: bigint;
  /** Of `amount`: 9 for SOL, the mint's for USDC (6 on mainnet). */
  decimals: number;
  /**
   * Who sent it, for attribution: the system transfer's `source`; the token transfer's `authority`
   * (or `multisigAuthority`), else the source account's owner from the token balances.
   */
  sender: string | null;
  /** Token transfers: the owner of the source account (differs from `sender` when a delegate signed). */
  sourceOwner: string | null;
  /**
   * The accounts a Solana Pay reference can be among. A token transfer's jsonParsed form names all
   * its accounts (a reference appended to `transferChecked` shows as one of its `signers`); a system
   * transfer's shows only source and destination, so the transaction's read-only non-signer keys
   * stand in for its extra accounts.
   */
  accounts: string[];
  slot: number;
  /** Unix seconds; null when the node does not know it. */
  blockTime: number | null;
}

const Address = Type.String({ minLength: 32, maxLength: 44 });
const Authorities = {
  authority: Type.Optional(Address),
  multisigAuthority: Type.Optional(Address),
  signers: Type.Optional(Type.Array(Address)),
};
const Amount = Type.String({ pattern: '^[0-9]{1,20}$' });

const SystemTransfer = Type.Object({
  source: Address,
  destination: Address,
  lamports: Type.Integer({ minimum: 0 }),
});
const TokenTransfer = Type.Object({ source: Address, destination: Address, amount: Amount, ...Authorities });
const TokenTransferChecked = Type.Object({
  source: Address,
  mint: Address,
  destination: Address,
  tokenAmount: Type.Object({ amount: Amount, decimals: Type.Integer({ minimum: 0, maximum: 255 }) }),
  ...Authorities,
});
const Parsed = Type.Object({ type: Type.String(), info: Type.Unknown() });
const Batch = Type.Object({ instructions: Type.Array(Parsed) });

const check = {
  parsed: Compile(Parsed),
  systemTransfer: Compile(SystemTransfer),
  tokenTransfer: Compile(TokenTransfer),
  tokenTransferChecked: Compile(TokenTransferChecked),
  batch: Compile(Batch),
};

/** The `info` of a transfer the deposit parser reads, or a bad_response error naming the instruction. */
function infoOf<T extends TSchema>(
  checker: ReturnType<typeof Compile<T>>,
  info: unknown,
  signature: string,
  at: string,
): Static<T> {
  if (!checker.Check(info)) {
    throw new SolanaRpcError(
      'bad_response',
      `transaction ${signature} instruction ${at}: unexpected transfer info`,
      {
        method: 'getTransaction',
      },
    );
  }
  return info as Static<T>;
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === 'string'))];
}

/**
 * Every deposit in one jsonParsed transaction (docs/deposits.md#what-a-deposit-is): each system `transfer` to the treasury
 * wallet, and each SPL Token `transfer`/`transferChecked` to the treasury's USDC account whose mint
 * is USDC (from the instruction, or for a plain `transfer` from the token balances), outer and
 * inner instructions alike. A failed transaction yields nothing. Token-2022 transfers and other
 * mints are not deposits. A transfer whose parsed form does not have the documented shape throws
 * (bad_response) rather than being skipped: money is never dropped silently.
 */
export function depositsOf(transaction: ParsedTransaction, treasury: Treasury): Deposit[] {
  if (transaction.meta.err !== null && transaction.meta.err !== undefined) return [];
  const signature = transaction.transaction.signatures[0] as string;
  const keys = transaction.transaction.message.accountKeys;
  const balances = new Map<number, TokenBalance>();
  // Pre first, post over it: a created account has only a post balance, a closed one only a pre.
  for (const b of transaction.meta.preTokenBalances ?? []) balances.set(b.accountIndex, b);
  for (const b of transaction.meta.postTokenBalances ?? []) balances.set(b.accountIndex, b);
  const balanceOf = (account: string) => {
    const index = keys.findIndex((k) => k.pubkey === account);
    return index < 0 ? undefined : balances.get(index);
  };
  const readonlyUnsigned = keys.filter((k) => !k.signer && !k.writable).map((k) => k.pubkey);
  const base = { signature, slot: transaction.slot, blockTime: transaction.blockTime ?? null };

  const depositOf = (programId: string, parsed: Static<typeof Parsed>, at: string): Deposit | null => {
    const { type, info } = parsed;
    const reference = `sol:${signature}:${at}`;
    if (programId === SYSTEM_PROGRAM && type === 'transfer') {
      const transfer = infoOf(check.systemTransfer, info, signature, at);
      if (transfer.destination !== treasury.wallet) return null;
      // jsonParsed carries lamports as a JSON number: refuse one JavaScript cannot hold exactly.
      if (!Number.isSafeInteger(transfer.lamports)) {
        throw new SolanaRpcError('bad_response', `transaction ${signature}: lamports beyond 2^53`);
      }
      return {
        ...base,
        reference,
        instruction: at,
        asset: 'SOL',
        amount: BigInt(transfer.lamports),
        decimals: 9,
        sender: transfer.source,
        sourceOwner: null,
        accounts: unique([transfer.source, transfer.destination, ...readonlyUnsigned]),
      };
    }
    if (programId !== TOKEN_PROGRAM || (type !== 'transfer' && type !== 'transferChecked')) return null;
    const transfer =
      type === 'transfer'
        ? infoOf(check.tokenTransfer, info, signature, at)
        : infoOf(check.tokenTransferChecked, info, signature, at);
    if (transfer.destination !== treasury.usdcAccount) return null;
    const destination = balanceOf(transfer.destination);
    const mint = 'mint' in transfer ? transfer.mint : destination?.mint;
    if (mint !== treasury.usdcMint) return null;
    const amount = 'tokenAmount' in transfer ? transfer.tokenAmount.amount : transfer.amount;
    const decimals =
      'tokenAmount' in transfer ? transfer.tokenAmount.decimals : destination?.uiTokenAmount.decimals;
    if (decimals === undefined) {
      throw new SolanaRpcError(
        'bad_response',
        `transaction ${signature}: no token balance for the treasury's account`,
      );
    }
    const sourceOwner = balanceOf(transfer.source)?.owner ?? null;
    const signer = transfer.authority ?? transfer.multisigAuthority;
    return {
      ...base,
      reference,
      instruction: at,
      asset: 'USDC',
      amount: BigInt(amount),
      decimals,
      sender: signer ?? sourceOwner,
      sourceOwner,
      accounts: unique([
        transfer.source,
        'mint' in transfer ? transfer.mint : undefined,
        transfer.destination,
        signer,
        ...(transfer.signers ?? []),
      ]),
    };
  };

  /**
   * The deposits of one instruction: itself, or — for the token program's `batch`, which executes
   * several token instructions in one without CPI — each of its instructions, as `<at>#<k>`.
   */
  const depositsIn = (ix: JsonParsedInstruction, at: string): Deposit[] => {
    if (ix.parsed === undefined || !check.parsed.Check(ix.parsed)) return [];
    if (ix.programId === TOKEN_PROGRAM && ix.parsed.type === 'batch') {
      const batch = infoOf(check.batch, ix.parsed.info, signature, at);
      return batch.instructions.flatMap((inner, k) => {
        const deposit = depositOf(ix.programId, inner, `${at}#${k}`);
        return deposit ? [deposit] : [];
      });
    }
    const deposit = depositOf(ix.programId, ix.parsed, at);
    return deposit ? [deposit] : [];
  };

  // In execution order: each outer instruction, then the inner ones it invoked.
  const inner = new Map((transaction.meta.innerInstructions ?? []).map((g) => [g.index, g.instructions]));
  const deposits: Deposit[] = [];
  transaction.transaction.message.instructions.forEach((ix, i) => {
    deposits.push(...depositsIn(ix, String(i)));
    (inner.get(i) ?? []).forEach((innerIx, j) => {
      deposits.push(...depositsIn(innerIx, `${i}.${j}`));
    });
  });
  return deposits;
}
