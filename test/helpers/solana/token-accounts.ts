import { getTokenDecoder } from '@solana-program/token';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const TOKEN_PROGRAM_IDS = new Set<string>([TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);

/** Size of a token account without extensions; Token-2022 accounts with extensions are longer. */
const TOKEN_ACCOUNT_SIZE = 165;
/** Token-2022 writes the account type right after the base layout: 1 = mint, 2 = account. */
const ACCOUNT_TYPE_ACCOUNT = 2;

/**
 * The mint, owner and amount of a token account's data, or null when the data is not an
 * initialised token account (a mint, a multisig, an empty account).
 */
export function readTokenAccount(data: Uint8Array): { mint: string; owner: string; amount: bigint } | null {
  if (data.length < TOKEN_ACCOUNT_SIZE) return null;
  if (data.length > TOKEN_ACCOUNT_SIZE && data[TOKEN_ACCOUNT_SIZE] !== ACCOUNT_TYPE_ACCOUNT) return null;
  const token = getTokenDecoder().decode(data.subarray(0, TOKEN_ACCOUNT_SIZE));
  // AccountState: 0 uninitialised, 1 initialised, 2 frozen.
  if (token.state === 0) return null;
  return { mint: token.mint, owner: token.owner, amount: token.amount };
}
