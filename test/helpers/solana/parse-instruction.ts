import { getBase58Decoder, isSome } from '@solana/kit';
import {
  getAllocateInstructionDataDecoder,
  getAssignInstructionDataDecoder,
  getCreateAccountInstructionDataDecoder,
  getTransferSolInstructionDataDecoder,
  identifySystemInstruction,
  SystemInstruction,
} from '@solana-program/system';
import {
  AssociatedTokenInstruction,
  getInitializeAccount3InstructionDataDecoder,
  getInitializeMint2InstructionDataDecoder,
  getMintToCheckedInstructionDataDecoder,
  getMintToInstructionDataDecoder,
  getTransferCheckedInstructionDataDecoder,
  getTransferInstructionDataDecoder,
  identifyAssociatedTokenInstruction,
  identifyTokenInstruction,
  TokenInstruction,
} from '@solana-program/token';
import type { CompiledInstruction } from './chain.js';
import { TOKEN_PROGRAM_IDS } from './token-accounts.js';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAMS = new Set([
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
]);

/** Token-2022's extension type ImmutableOwner, which the ATA program asks the account size for. */
const EXTENSION_IMMUTABLE_OWNER = 7;

type Info = Record<string, unknown>;
type Parsed = { type: string; info: Info };

/** What a jsonParsed instruction is: a parsed one, or the partially decoded fallback. */
export type JsonParsedInstruction =
  | { program: string; programId: string; parsed: Parsed | string; stackHeight: number | null }
  | { programId: string; accounts: string[]; data: string; stackHeight: number | null };

/**
 * The `tokenAmount` of a checked token instruction, as Solana writes it: the amount as a string,
 * `uiAmount` as a float and `uiAmountString` as the trimmed decimal.
 */
export function uiTokenAmount(amount: bigint, decimals: number) {
  return {
    uiAmount: Number(amount) / 10 ** decimals,
    decimals,
    amount: amount.toString(),
    uiAmountString: trimmedDecimal(amount, decimals),
  };
}

/** `2500000` with 6 decimals → "2.5"; whole amounts have no point ("25"). */
export function trimmedDecimal(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * Parses one compiled instruction the way Solana's RPC does for `jsonParsed` (agave
 * transaction-status: parse_system, parse_token, parse_associated_token, the memo parser), for the
 * instructions our scenarios execute. Anything else — another program, or an instruction of these
 * programs we do not parse — takes the fallback Solana uses for unparsable instructions:
 * `{programId, accounts, data (base58), stackHeight}`.
 */
export function parseInstruction(
  ix: CompiledInstruction,
  keys: string[],
  stackHeight: number | null,
): JsonParsedInstruction {
  const programId = keys[ix.programIdIndex] as string;
  // Solana answers an instruction that names fewer accounts than its kind needs with the fallback.
  const key = (position: number) => {
    const found = keys[ix.accounts[position] ?? -1];
    if (found === undefined) throw new Error('instruction key mismatch');
    return found;
  };
  let parsed: { program: string; parsed: Parsed | string } | null = null;
  try {
    if (programId === SYSTEM_PROGRAM) parsed = wrap('system', parseSystem(ix.data, key));
    else if (TOKEN_PROGRAM_IDS.has(programId)) parsed = wrap('spl-token', parseToken(ix, key, keys));
    else if (programId === ATA_PROGRAM) parsed = wrap('spl-associated-token-account', parseAta(ix.data, key));
    else if (MEMO_PROGRAMS.has(programId))
      parsed = wrap('spl-memo', new TextDecoder('utf-8', { fatal: true }).decode(ix.data));
  } catch {
    parsed = null;
  }
  if (parsed) return { program: parsed.program, programId, parsed: parsed.parsed, stackHeight };
  return {
    programId,
    accounts: ix.accounts.map((i) => keys[i] as string),
    data: getBase58Decoder().decode(ix.data),
    stackHeight,
  };
}

function wrap(program: string, parsed: Parsed | string | null) {
  return parsed === null ? null : { program, parsed };
}

function parseSystem(data: Uint8Array, key: (position: number) => string): Parsed | null {
  switch (identifySystemInstruction(data)) {
    case SystemInstruction.CreateAccount: {
      const d = getCreateAccountInstructionDataDecoder().decode(data);
      return {
        type: 'createAccount',
        info: {
          source: key(0),
          newAccount: key(1),
          lamports: Number(d.lamports),
          space: Number(d.space),
          owner: d.programAddress,
        },
      };
    }
    case SystemInstruction.Assign:
      return {
        type: 'assign',
        info: { account: key(0), owner: getAssignInstructionDataDecoder().decode(data).programAddress },
      };
    case SystemInstruction.TransferSol: {
      const lamports = getTransferSolInstructionDataDecoder().decode(data).amount;
      return { type: 'transfer', info: { source: key(0), destination: key(1), lamports: Number(lamports) } };
    }
    case SystemInstruction.Allocate:
      return {
        type: 'allocate',
        info: { account: key(0), space: Number(getAllocateInstructionDataDecoder().decode(data).space) },
      };
    default:
      return null;
  }
}

/**
 * Solana's rule for a token instruction's authority: one account after the fixed ones is the
 * single `authority`; more means the first is a multisig (`multisigAuthority`) and the rest its
 * `signers`.
 */
function signers(
  info: Info,
  ix: CompiledInstruction,
  keys: string[],
  lastNonSigner: number,
  one: string,
  multi: string,
) {
  const owner = keys[ix.accounts[lastNonSigner] as number];
  if (ix.accounts.length > lastNonSigner + 1) {
    if (owner) info[multi] = owner;
    info.signers = ix.accounts.slice(lastNonSigner + 1).map((i) => keys[i]);
  } else if (owner) {
    info[one] = owner;
  }
  return info;
}

function parseToken(
  ix: CompiledInstruction,
  key: (position: number) => string,
  keys: string[],
): Parsed | null {
  const data = ix.data;
  switch (identifyTokenInstruction(data)) {
    case TokenInstruction.Transfer: {
      const { amount } = getTransferInstructionDataDecoder().decode(data);
      const info = { source: key(0), destination: key(1), amount: amount.toString() };
      return { type: 'transfer', info: signers(info, ix, keys, 2, 'authority', 'multisigAuthority') };
    }
    case TokenInstruction.TransferChecked: {
      const { amount, decimals } = getTransferCheckedInstructionDataDecoder().decode(data);
      const info = {
        source: key(0),
        mint: key(1),
        destination: key(2),
        tokenAmount: uiTokenAmount(amount, decimals),
      };
      return { type: 'transferChecked', info: signers(info, ix, keys, 3, 'authority', 'multisigAuthority') };
    }
    case TokenInstruction.MintTo: {
      const { amount } = getMintToInstructionDataDecoder().decode(data);
      const info = { mint: key(0), account: key(1), amount: amount.toString() };
      return { type: 'mintTo', info: signers(info, ix, keys, 2, 'mintAuthority', 'multisigMintAuthority') };
    }
    case TokenInstruction.MintToChecked: {
      const { amount, decimals } = getMintToCheckedInstructionDataDecoder().decode(data);
      const info = { mint: key(0), account: key(1), tokenAmount: uiTokenAmount(amount, decimals) };
      return {
        type: 'mintToChecked',
        info: signers(info, ix, keys, 2, 'mintAuthority', 'multisigMintAuthority'),
      };
    }
    case TokenInstruction.CloseAccount: {
      const info = { account: key(0), destination: key(1) };
      return { type: 'closeAccount', info: signers(info, ix, keys, 2, 'owner', 'multisigOwner') };
    }
    case TokenInstruction.InitializeMint2: {
      const d = getInitializeMint2InstructionDataDecoder().decode(data);
      const info: Info = { mint: key(0), decimals: d.decimals, mintAuthority: d.mintAuthority };
      if (isSome(d.freezeAuthority)) info.freezeAuthority = d.freezeAuthority.value;
      return { type: 'initializeMint2', info };
    }
    case TokenInstruction.InitializeAccount3: {
      const { owner } = getInitializeAccount3InstructionDataDecoder().decode(data);
      return { type: 'initializeAccount3', info: { account: key(0), mint: key(1), owner } };
    }
    case TokenInstruction.GetAccountDataSize: {
      const info: Info = { mint: key(0) };
      // The extension types follow as little-endian u16s (only Token-2022 is asked for any).
      const extensions: string[] = [];
      for (let at = 1; at + 1 < data.length; at += 2) {
        const type = (data[at] as number) | ((data[at + 1] as number) << 8);
        if (type !== EXTENSION_IMMUTABLE_OWNER) return null;
        extensions.push('immutableOwner');
      }
      if (extensions.length > 0) info.extensionTypes = extensions;
      return { type: 'getAccountDataSize', info };
    }
    case TokenInstruction.InitializeImmutableOwner:
      return { type: 'initializeImmutableOwner', info: { account: key(0) } };
    case TokenInstruction.Batch:
      return parseBatch(ix, keys);
    default:
      return null;
  }
}

/**
 * The token program's `batch` (tag 255): instructions packed as [account count, data length, data],
 * each taking the next accounts of the instruction in turn; parsed as `{type: "batch", info:
 * {instructions: [{type, info}, …]}}` (agave parse_token). A batch inside a batch is not parsable.
 */
function parseBatch(ix: CompiledInstruction, keys: string[]): Parsed | null {
  const instructions: Parsed[] = [];
  let at = 1;
  let account = 0;
  while (at < ix.data.length) {
    const count = ix.data[at] as number;
    const length = ix.data[at + 1];
    if (length === undefined || at + 2 + length > ix.data.length) return null;
    const data = ix.data.subarray(at + 2, at + 2 + length);
    if (data[0] === 255 || account + count > ix.accounts.length) return null;
    const inner = {
      programIdIndex: ix.programIdIndex,
      accounts: ix.accounts.slice(account, account + count),
      data,
    };
    const key = (position: number) => {
      const found = keys[inner.accounts[position] ?? -1];
      if (found === undefined) throw new Error('instruction key mismatch');
      return found;
    };
    const parsed = parseToken(inner, key, keys);
    if (!parsed) return null;
    instructions.push(parsed);
    at += 2 + length;
    account += count;
  }
  return { type: 'batch', info: { instructions } };
}

function parseAta(data: Uint8Array, key: (position: number) => string): Parsed | null {
  // An empty instruction is the original `create`, still accepted by the program.
  const kind =
    data.length === 0
      ? AssociatedTokenInstruction.CreateAssociatedToken
      : identifyAssociatedTokenInstruction(data);
  switch (kind) {
    case AssociatedTokenInstruction.CreateAssociatedToken:
    case AssociatedTokenInstruction.CreateAssociatedTokenIdempotent:
      return {
        type: kind === AssociatedTokenInstruction.CreateAssociatedToken ? 'create' : 'createIdempotent',
        info: {
          source: key(0),
          account: key(1),
          wallet: key(2),
          mint: key(3),
          systemProgram: key(4),
          tokenProgram: key(5),
        },
      };
    case AssociatedTokenInstruction.RecoverNestedAssociatedToken:
      return {
        type: 'recoverNested',
        info: {
          nestedSource: key(0),
          nestedMint: key(1),
          destination: key(2),
          nestedOwner: key(3),
          ownerMint: key(4),
          wallet: key(5),
          tokenProgram: key(6),
        },
      };
    default:
      return null;
  }
}
