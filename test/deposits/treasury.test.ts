import { address } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { describe, expect, it } from 'vitest';
import { TOKEN_PROGRAM, treasuryOf } from '../../src/deposits/treasury.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

describe('the treasury USDC account', () => {
  it('is the associated token account the ATA program itself creates for the treasury', async () => {
    const world = await DepositWorld.create();
    const payer = await world.user();
    const created = await world.openAta(payer, world.treasury.address);
    expect(created.meta.err).toBeNull();
    const treasury = await treasuryOf(world.treasury.address, USDC_MINT);
    // The program refuses any address but the right one, and the new account is owned by the treasury.
    const account = world.chain.svm.getAccount(address(treasury.usdcAccount));
    expect(account.exists && account.programAddress).toBe(TOKEN_PROGRAM);
    expect(created.meta.postTokenBalances).toEqual([
      expect.objectContaining({ mint: USDC_MINT, owner: world.treasury.address, amount: 0n }),
    ]);
    expect(treasury).toEqual({
      wallet: world.treasury.address,
      usdcMint: USDC_MINT,
      usdcAccount: treasury.usdcAccount,
    });
  });

  it('agrees with the token program client for other wallets and mints', async () => {
    for (const [owner, mint] of [
      ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', USDC_MINT],
      ['5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB'],
    ] as const) {
      const [expected] = await findAssociatedTokenPda({
        owner: address(owner),
        mint: address(mint),
        tokenProgram: address(TOKEN_PROGRAM),
      });
      expect((await treasuryOf(owner, mint)).usdcAccount).toBe(expected);
    }
  });
});
