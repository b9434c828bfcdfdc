import {
  type Address,
  address,
  createKeyPairSignerFromPrivateKeyBytes,
  generateKeyPairSigner,
  type Instruction,
  type KeyPairSigner,
  lamports,
  none,
  some,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintEncoder,
  getMintToInstruction,
} from '@solana-program/token';
import { type ExecutedTransaction, LocalChain } from './chain.js';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './token-accounts.js';

/** Mainnet USDC: the chain holds a mint at this very address, so the default setting works as is. */
export const USDC_MINT = address('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
const MINT_SIZE = 82n;

export interface Mint {
  address: Address;
  decimals: number;
  program: Address;
  authority: KeyPairSigner;
}

/**
 * A chain with a treasury and the mints the deposit cases need: USDC (at its mainnet address, SPL
 * Token, 6 decimals), another SPL Token mint, and a Token-2022 mint. Every setup step after the
 * USDC mint itself is a real transaction; each is returned so a test can publish it too (a real
 * treasury's history holds such transactions beside the deposits).
 */
export class DepositWorld {
  private constructor(
    readonly chain: LocalChain,
    readonly treasury: KeyPairSigner,
    readonly usdc: Mint,
    readonly otherMint: Mint,
    readonly token2022Mint: Mint,
  ) {}

  static async create(): Promise<DepositWorld> {
    const chain = new LocalChain();
    const treasury = await chain.wallet(1_000_000_000n);
    const usdcAuthority = await chain.wallet();
    // Nobody can sign for the mainnet USDC address, so its mint account is written directly, with
    // the token program's own account encoder; every later use of it is a real instruction.
    const data = getMintEncoder().encode({
      mintAuthority: some(usdcAuthority.address),
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthority: none(),
    });
    chain.svm.setAccount({
      address: USDC_MINT,
      data: new Uint8Array(data),
      executable: false,
      lamports: lamports(chain.svm.minimumBalanceForRentExemption(MINT_SIZE)),
      programAddress: address(TOKEN_PROGRAM),
      space: MINT_SIZE,
    });
    const usdc: Mint = {
      address: USDC_MINT,
      decimals: 6,
      program: address(TOKEN_PROGRAM),
      authority: usdcAuthority,
    };
    const world = new DepositWorld(
      chain,
      treasury,
      usdc,
      await createMint(chain, 6, address(TOKEN_PROGRAM)),
      await createMint(chain, 6, address(TOKEN_2022_PROGRAM)),
    );
    return world;
  }

  async ata(owner: Address, mint: Mint = this.usdc): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({ owner, tokenProgram: mint.program, mint: mint.address });
    return ata;
  }

  /** The treasury's USDC account: the associated token account of the treasury for USDC. */
  treasuryUsdc(): Promise<Address> {
    return this.ata(this.treasury.address);
  }

  /** An instruction creating `owner`'s associated token account for `mint` if missing. */
  async createAtaInstruction(
    payer: KeyPairSigner,
    owner: Address,
    mint: Mint = this.usdc,
  ): Promise<Instruction> {
    return getCreateAssociatedTokenIdempotentInstruction({
      payer,
      ata: await this.ata(owner, mint),
      owner,
      mint: mint.address,
      tokenProgram: mint.program,
    });
  }

  /** Creates `owner`'s token account for `mint` in its own transaction (paid by `payer`). */
  async openAta(payer: KeyPairSigner, owner: Address, mint: Mint = this.usdc): Promise<ExecutedTransaction> {
    return this.chain.send(payer, [await this.createAtaInstruction(payer, owner, mint)]);
  }

  /** A wallet with SOL and, when asked, `tokens` base units of `mint` in its associated account. */
  async user(tokens = 0n, mint: Mint = this.usdc): Promise<KeyPairSigner> {
    const wallet = await this.chain.wallet();
    if (tokens > 0n) await this.mintTo(wallet, wallet.address, tokens, mint);
    return wallet;
  }

  /**
   * The wallet whose private key is `seed` (a browser test's wallet, signing in the page) as a
   * signer on the chain, with 10 SOL and, when asked, `tokens` base units of `mint`.
   */
  async walletOf(seed: Uint8Array, tokens = 0n, mint: Mint = this.usdc): Promise<KeyPairSigner> {
    const wallet = await createKeyPairSignerFromPrivateKeyBytes(seed);
    this.chain.svm.airdrop(wallet.address, lamports(10_000_000_000n));
    if (tokens > 0n) await this.mintTo(wallet, wallet.address, tokens, mint);
    return wallet;
  }

  /** Mints `amount` to `owner`'s associated account, creating it when missing. */
  async mintTo(payer: KeyPairSigner, owner: Address, amount: bigint, mint: Mint = this.usdc) {
    const ata = await this.ata(owner, mint);
    return this.chain.send(payer, [
      await this.createAtaInstruction(payer, owner, mint),
      getMintToInstruction(
        { mint: mint.address, token: ata, mintAuthority: mint.authority, amount },
        { programAddress: mint.program },
      ),
    ]);
  }

  solTransfer(from: KeyPairSigner, to: Address, amount: bigint): Instruction {
    return getTransferSolInstruction({ source: from, destination: to, amount });
  }
}

async function createMint(chain: LocalChain, decimals: number, program: Address): Promise<Mint> {
  const payer = await chain.wallet();
  const mint = await generateKeyPairSigner();
  const rent = chain.svm.minimumBalanceForRentExemption(MINT_SIZE);
  const result = await chain.send(payer, [
    getCreateAccountInstruction({
      payer,
      newAccount: mint,
      lamports: rent,
      space: MINT_SIZE,
      programAddress: program,
    }),
    getInitializeMint2Instruction(
      { mint: mint.address, decimals, mintAuthority: payer.address, freezeAuthority: null },
      { programAddress: program },
    ),
  ]);
  if (result.meta.err !== null) throw new Error(`mint creation failed: ${JSON.stringify(result.meta.err)}`);
  return { address: mint.address, decimals, program, authority: payer };
}
