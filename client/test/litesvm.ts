import {
  appendTransactionMessageInstructions,
  type Blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  type Instruction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';

/** The Ed25519 program's PrecompileError::InvalidSignature, for the first instruction. */
export const INVALID_SIGNATURE = /InstructionError\(0, Custom\(2\)\)/;

export interface Chain {
  /** Signs (by a funded payer) and processes a transaction of `instructions`: 'ok' or the runtime's error. */
  send(instructions: Instruction[]): Promise<string>;
}

/** A local chain (LiteSVM: the real runtime and native programs) and a funded payer. */
export async function newChain(): Promise<Chain> {
  const svm = new LiteSVM();
  const payer = await generateKeyPairSigner();
  svm.airdrop(payer.address, lamports(1_000_000_000n));
  return {
    async send(instructions) {
      svm.expireBlockhash();
      const blockhash = svm.latestBlockhash() as Blockhash;
      const transaction = await pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 0n }, m),
        (m) => appendTransactionMessageInstructions(instructions, m),
        (m) => signTransactionMessageWithSigners(m),
      );
      const result = svm.sendTransaction(transaction);
      return result instanceof FailedTransactionMetadata ? result.toString() : 'ok';
    },
  };
}
