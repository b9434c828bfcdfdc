import { address, getAddressEncoder, getProgramDerivedAddress } from '@solana/addresses';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** The SPL Token program; USDC lives there (a Token-2022 transfer is never a USDC deposit). */
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

/** Where deposits arrive: the treasury wallet (SOL) and its USDC associated token account. */
export interface Treasury {
  wallet: string;
  usdcMint: string;
  usdcAccount: string;
}

/**
 * The treasury's USDC account is derived, not configured (docs/deposits.md#what-a-deposit-is): the associated token
 * account, the program-derived address of [wallet, token program, mint] under the Associated Token
 * Account program. Derived with @solana/addresses (SHA-256 and the off-curve check), not by hand.
 */
export async function treasuryOf(depositAddress: string, usdcMint: string): Promise<Treasury> {
  const encoder = getAddressEncoder();
  const [usdcAccount] = await getProgramDerivedAddress({
    programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
    seeds: [
      encoder.encode(address(depositAddress)),
      encoder.encode(address(TOKEN_PROGRAM)),
      encoder.encode(address(usdcMint)),
    ],
  });
  return { wallet: depositAddress, usdcMint, usdcAccount };
}
