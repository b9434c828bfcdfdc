// The few names our scenarios can meet. Solana serialises a unit variant as its name and a
// variant with data as `{ Name: data }`; LiteSVM hands them over as numbers and small classes
// (not exported by the package, so recognised here by their shape).
const INSTRUCTION_ERRORS: Record<number, string> = {
  0: 'GenericError',
  1: 'InvalidArgument',
  2: 'InvalidInstructionData',
  3: 'InvalidAccountData',
  5: 'InsufficientFunds',
  7: 'MissingRequiredSignature',
  8: 'AccountAlreadyInitialized',
  9: 'UninitializedAccount',
};
const TRANSACTION_ERRORS: Record<number, string> = {
  2: 'AccountNotFound',
  4: 'InsufficientFundsForFee',
  6: 'AlreadyProcessed',
  7: 'BlockhashNotFound',
};

interface InstructionErrorShape {
  index: number;
  err(): unknown;
}

function isInstructionError(value: unknown): value is InstructionErrorShape {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as InstructionErrorShape).index === 'number' &&
    typeof (value as InstructionErrorShape).err === 'function'
  );
}

/**
 * A LiteSVM transaction error as Solana's JSON-RPC writes it in `meta.err`, e.g.
 * `{"InstructionError":[0,{"Custom":1}]}`. Throws on an error no scenario expects rather than
 * inventing a shape.
 */
export function transactionErrorJson(err: unknown): unknown {
  if (isInstructionError(err)) {
    const inner = err.err();
    if (
      typeof inner === 'object' &&
      inner !== null &&
      typeof (inner as { code?: unknown }).code === 'number'
    ) {
      return { InstructionError: [err.index, { Custom: (inner as { code: number }).code }] };
    }
    if (typeof inner === 'number' && INSTRUCTION_ERRORS[inner]) {
      return { InstructionError: [err.index, INSTRUCTION_ERRORS[inner]] };
    }
    throw new Error(`unmapped instruction error: ${String(inner)}`);
  }
  if (typeof err === 'number' && TRANSACTION_ERRORS[err]) return TRANSACTION_ERRORS[err];
  throw new Error(`unmapped transaction error: ${String(err)}`);
}
