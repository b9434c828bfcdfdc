import Type, { type Static } from 'typebox';

/**
 * The Solana JSON-RPC port of the deposit watcher: only the calls it makes, with only the fields it
 * reads. The adapter (rpc-client.ts) checks every response against these schemas at the boundary;
 * tests hand in the same adapter pointed at a local fake (test/helpers/solana/rpc-server.ts).
 */

export type Commitment = 'confirmed' | 'finalized';

const Address = Type.String({ minLength: 32, maxLength: 44 });
const Integer = Type.Integer({ minimum: 0 });

/** One entry of `getSignaturesForAddress` (docs/deposits.md#reading-the-chain;
 * https://solana.com/docs/rpc/http/getsignaturesforaddress). */
export const SignatureInfoSchema = Type.Object({
  signature: Type.String({ minLength: 64, maxLength: 88 }),
  slot: Integer,
  /** A TransactionError object when the transaction failed (failed transactions are listed too). */
  err: Type.Unknown(),
  blockTime: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  /**
   * Required: the scan credits only what a node calls `finalized`; without the field it could only
   * ever see pending transactions, so its absence is an error, not a silent stall.
   */
  confirmationStatus: Type.Union([Type.String(), Type.Null()]),
  memo: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type SignatureInfo = Static<typeof SignatureInfoSchema>;
export const SignatureListSchema = Type.Array(SignatureInfoSchema);

/**
 * A jsonParsed instruction: parsed (`program`, `parsed`) or, for programs the RPC cannot parse,
 * partially decoded (`accounts`, `data`). Only `programId` is common; the deposit parser checks
 * the `info` of the instruction kinds it reads with its own schemas.
 */
export const InstructionSchema = Type.Object({
  programId: Address,
  program: Type.Optional(Type.String()),
  parsed: Type.Optional(Type.Unknown()),
  accounts: Type.Optional(Type.Array(Type.String())),
});
export type JsonParsedInstruction = Static<typeof InstructionSchema>;

const UiTokenAmount = Type.Object({
  amount: Type.String({ pattern: '^[0-9]{1,20}$' }),
  decimals: Type.Integer({ minimum: 0, maximum: 255 }),
});

export const TokenBalanceSchema = Type.Object({
  accountIndex: Integer,
  mint: Address,
  owner: Type.Optional(Address),
  programId: Type.Optional(Address),
  uiTokenAmount: UiTokenAmount,
});
export type TokenBalance = Static<typeof TokenBalanceSchema>;

/** `getTransaction` with `encoding: "jsonParsed"` (docs/deposits.md#reading-the-chain;
 * https://solana.com/docs/rpc/http/gettransaction): the fields deposits read. */
export const ParsedTransactionSchema = Type.Object({
  slot: Integer,
  blockTime: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  meta: Type.Object({
    err: Type.Unknown(),
    innerInstructions: Type.Optional(
      Type.Union([
        Type.Array(Type.Object({ index: Integer, instructions: Type.Array(InstructionSchema) })),
        Type.Null(),
      ]),
    ),
    preTokenBalances: Type.Optional(Type.Union([Type.Array(TokenBalanceSchema), Type.Null()])),
    postTokenBalances: Type.Optional(Type.Union([Type.Array(TokenBalanceSchema), Type.Null()])),
  }),
  transaction: Type.Object({
    signatures: Type.Array(Type.String(), { minItems: 1 }),
    message: Type.Object({
      accountKeys: Type.Array(
        Type.Object({ pubkey: Address, signer: Type.Boolean(), writable: Type.Boolean() }),
      ),
      instructions: Type.Array(InstructionSchema),
    }),
  }),
});
export type ParsedTransaction = Static<typeof ParsedTransactionSchema>;

/** Why a call failed, for retries, logs and metrics. */
export type RpcFailure =
  /** HTTP 429: the provider's rate limit. */
  | 'rate_limited'
  /** Another HTTP status outside 2xx. */
  | 'http_error'
  /** A JSON-RPC error object (usually inside HTTP 200). */
  | 'rpc_error'
  | 'timeout'
  | 'network'
  /** A body that is not JSON-RPC, or a result outside the schema. */
  | 'bad_response';

export class SolanaRpcError extends Error {
  override name = 'SolanaRpcError';
  constructor(
    readonly kind: RpcFailure,
    message: string,
    readonly details: {
      method?: string;
      /** HTTP status, when the failure is one. */
      status?: number;
      /** JSON-RPC error code, for `rpc_error`. */
      code?: number;
      /** How long the provider asked us to wait (Retry-After). */
      retryAfterMs?: number;
    } = {},
  ) {
    super(message);
  }
}

/**
 * A transaction the node answered in a shape outside ParsedTransactionSchema, and why: one
 * transaction's answer, not the whole call's, so the watcher records it and reads on
 * (docs/deposits.md#unreadable-transactions).
 */
export interface UnreadableAnswer {
  unreadable: string;
}

/** The calls the deposit watcher makes. */
export interface SolanaRpc {
  /** Newest first; `before`/`until` exclusive, as the RPC defines them. */
  getSignaturesForAddress(
    address: string,
    options: { commitment: Commitment; limit: number; before?: string; until?: string },
  ): Promise<SignatureInfo[]>;
  /**
   * `getTransaction` (jsonParsed, `maxSupportedTransactionVersion: 0`) for each signature, in order;
   * null for a transaction the node does not have at this commitment; an UnreadableAnswer for one
   * answered outside the schema. Sent as JSON-RPC batches.
   */
  getTransactions(
    signatures: string[],
    commitment: Commitment,
  ): Promise<(ParsedTransaction | UnreadableAnswer | null)[]>;
  getSlot(commitment: Commitment): Promise<number>;
}
