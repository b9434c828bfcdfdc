import {
  AccountRole,
  type Address,
  address,
  generateKeyPairSigner,
  getUtf8Encoder,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import {
  getBatchInstruction,
  getRecoverNestedAssociatedTokenInstruction,
  getTransferCheckedInstruction,
  getTransferInstruction,
} from '@solana-program/token';
import type { ExecutedTransaction } from './chain.js';
import type { DepositWorld, Mint } from './world.js';

const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** A deposit case: the transaction that carries it, and the keys a test needs to check the result. */
export interface DepositCase {
  tx: ExecutedTransaction;
  sender: Address;
  /** A Solana Pay reference key, when the case carries one. */
  reference?: Address;
}

/** `transferChecked` of `amount` base units of `mint` from `from`'s associated account to `to`. */
export async function transferChecked(
  world: DepositWorld,
  from: KeyPairSigner,
  to: Address,
  amount: bigint,
  mint: Mint = world.usdc,
): Promise<Instruction> {
  return getTransferCheckedInstruction(
    {
      source: await world.ata(from.address, mint),
      mint: mint.address,
      destination: to,
      authority: from,
      amount,
      decimals: mint.decimals,
    },
    { programAddress: mint.program },
  );
}

/** A Solana Pay reference: the key appended read-only and unsigned to the transfer instruction. */
function withReference(instruction: Instruction, reference: Address): Instruction {
  return {
    ...instruction,
    accounts: [...(instruction.accounts ?? []), { address: reference, role: AccountRole.READONLY }],
  };
}

function memo(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM, accounts: [], data: getUtf8Encoder().encode(text) };
}

/** SOL from a wallet to the treasury: one system `transfer`. */
export async function solDeposit(
  world: DepositWorld,
  lamports: bigint,
  from?: KeyPairSigner,
): Promise<DepositCase> {
  const sender = from ?? (await world.user());
  const tx = await world.chain.send(sender, [world.solTransfer(sender, world.treasury.address, lamports)]);
  return { tx, sender: sender.address };
}

/** USDC by `transferChecked` to the treasury's USDC account. */
export async function usdcCheckedDeposit(
  world: DepositWorld,
  amount: bigint,
  from?: KeyPairSigner,
): Promise<DepositCase> {
  const sender = from ?? (await world.user(amount));
  const tx = await world.chain.send(sender, [
    await transferChecked(world, sender, await world.treasuryUsdc(), amount),
  ]);
  return { tx, sender: sender.address };
}

/** USDC by the plain `transfer` (no mint in the instruction: it comes from the token balances). */
export async function usdcPlainDeposit(world: DepositWorld, amount: bigint): Promise<DepositCase> {
  const sender = await world.user(amount);
  const instruction = getTransferInstruction({
    source: await world.ata(sender.address),
    destination: await world.treasuryUsdc(),
    authority: sender,
    amount,
  });
  const tx = await world.chain.send(sender, [instruction]);
  return { tx, sender: sender.address };
}

/**
 * The treasury's USDC account created in the same transaction as the transfer to it (what a wallet
 * sends when the recipient has no USDC account yet): no pre token balance for it.
 */
export async function usdcDepositCreatingAccount(world: DepositWorld, amount: bigint): Promise<DepositCase> {
  const sender = await world.user(amount);
  const tx = await world.chain.send(sender, [
    await world.createAtaInstruction(sender, world.treasury.address),
    await transferChecked(world, sender, await world.treasuryUsdc(), amount),
  ]);
  return { tx, sender: sender.address };
}

/** Two transfers to the treasury in one transaction: USDC (instruction 0), then SOL (instruction 1). */
export async function twoDeposits(world: DepositWorld, usdc: bigint, lamports: bigint): Promise<DepositCase> {
  const sender = await world.user(usdc);
  const tx = await world.chain.send(sender, [
    await transferChecked(world, sender, await world.treasuryUsdc(), usdc),
    world.solTransfer(sender, world.treasury.address, lamports),
  ]);
  return { tx, sender: sender.address };
}

/**
 * A transaction paying someone else USDC (instruction 0) and the treasury SOL (instruction 1):
 * only the second is ours.
 */
export async function depositBesideOtherTransfer(
  world: DepositWorld,
  usdc: bigint,
  lamports: bigint,
): Promise<DepositCase> {
  const sender = await world.user(usdc);
  const other = await world.user();
  await world.openAta(other, other.address);
  const tx = await world.chain.send(sender, [
    await transferChecked(world, sender, await world.ata(other.address), usdc),
    world.solTransfer(sender, world.treasury.address, lamports),
  ]);
  return { tx, sender: sender.address };
}

/** A USDC transfer for more than the sender holds: it fails, with `meta.err` set and the fee paid. */
export async function failedUsdcDeposit(
  world: DepositWorld,
  holds: bigint,
  sends: bigint,
): Promise<DepositCase> {
  const sender = await world.user(holds);
  const tx = await world.chain.send(sender, [
    await transferChecked(world, sender, await world.treasuryUsdc(), sends),
  ]);
  return { tx, sender: sender.address };
}

/**
 * A transfer of another mint (`world.otherMint` on SPL Token, or the Token-2022 mint) to the
 * treasury's account for that mint: not USDC, so not a deposit.
 */
export async function otherMintTransfer(
  world: DepositWorld,
  mint: Mint,
  amount: bigint,
): Promise<DepositCase> {
  const sender = await world.user(amount, mint);
  const tx = await world.chain.send(sender, [
    await world.createAtaInstruction(sender, world.treasury.address, mint),
    await transferChecked(world, sender, await world.ata(world.treasury.address, mint), amount, mint),
  ]);
  return { tx, sender: sender.address };
}

/**
 * A Solana Pay payment (spec: the reference is a read-only, non-signer key of the transfer
 * instruction; the memo is its own instruction before it) from a wallet nobody knows.
 */
export async function solanaPayUsdcDeposit(
  world: DepositWorld,
  amount: bigint,
  label: string,
): Promise<DepositCase> {
  const sender = await world.user(amount);
  const reference = (await generateKeyPairSigner()).address;
  const transfer = withReference(
    await transferChecked(world, sender, await world.treasuryUsdc(), amount),
    reference,
  );
  const tx = await world.chain.send(sender, [memo(label), transfer]);
  return { tx, sender: sender.address, reference };
}

/** The same for SOL: the reference rides on the system `transfer`. */
export async function solanaPaySolDeposit(world: DepositWorld, lamports: bigint): Promise<DepositCase> {
  const sender = await world.user();
  const reference = (await generateKeyPairSigner()).address;
  const transfer = withReference(world.solTransfer(sender, world.treasury.address, lamports), reference);
  const tx = await world.chain.send(sender, [transfer]);
  return { tx, sender: sender.address, reference };
}

/**
 * A USDC deposit made by a program through an inner (CPI) instruction. The programs LiteSVM carries
 * are System, SPL Token, Token-2022, Associated Token Account, Memo and Address Lookup Table; the one
 * that moves tokens by CPI is the ATA program's `recoverNested`. It mends a real mistake: a payer
 * who took the treasury's token account for a wallet and sent USDC to the USDC account *of that
 * account*. The treasury signs `recoverNested`, and the program CPIs `transferChecked` (inner 0)
 * from the nested account into the treasury's USDC account, signed by the owning account (a PDA),
 * then closes the nested account (inner 1). `sender` here is the payer who made the mistake.
 */
export async function innerUsdcDeposit(world: DepositWorld, amount: bigint): Promise<DepositCase> {
  const payer = await world.user(amount);
  const ownerAccount = await world.ata(world.treasury.address, world.otherMint);
  await world.openAta(payer, world.treasury.address, world.otherMint);
  const nested = await world.ata(ownerAccount, world.usdc);
  await world.chain.send(payer, [
    await world.createAtaInstruction(payer, ownerAccount, world.usdc),
    await transferChecked(world, payer, nested, amount),
  ]);
  await world.openAta(payer, world.treasury.address);
  const recover = getRecoverNestedAssociatedTokenInstruction({
    nestedAssociatedAccountAddress: nested,
    nestedTokenMintAddress: world.usdc.address,
    destinationAssociatedAccountAddress: await world.treasuryUsdc(),
    ownerAssociatedAccountAddress: ownerAccount,
    ownerTokenMintAddress: world.otherMint.address,
    walletAddress: world.treasury,
    tokenProgram: world.usdc.program,
  });
  const tx = await world.chain.send(world.treasury, [recover]);
  return { tx, sender: payer.address };
}

/**
 * Two USDC transfers to the treasury in one token `batch` instruction (the token program's
 * instruction 255, which runs several token instructions in one, without CPI), after a memo.
 */
export async function batchedUsdcDeposits(
  world: DepositWorld,
  first: bigint,
  second: bigint,
): Promise<DepositCase> {
  const sender = await world.user(first + second);
  const treasuryUsdc = await world.treasuryUsdc();
  const batch = getBatchInstruction([
    (await transferChecked(world, sender, treasuryUsdc, first)) as never,
    (await transferChecked(world, sender, treasuryUsdc, second)) as never,
  ]);
  const tx = await world.chain.send(sender, [memo('two in one'), batch]);
  return { tx, sender: sender.address };
}
