import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { encodeBase58 } from '../../src/lib/base58.js';

/** A Solana wallet for tests: a real Ed25519 key pair held in Node, its address the public key in base58. */
export class TestWallet {
  readonly address: string;
  private readonly privateKey: KeyObject;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    // The SPKI DER of an Ed25519 key is a 12-byte header and the 32-byte key.
    this.address = encodeBase58(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
    this.privateKey = privateKey;
  }

  /** The 32-byte private key (the Ed25519 seed), for a Solana signer of the same wallet (@solana/kit). */
  seed(): Uint8Array {
    // The PKCS#8 DER of an Ed25519 key is a 16-byte header and the 32-byte seed.
    return new Uint8Array(this.privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16));
  }

  /** The Ed25519 signature of `message`, as a wallet's signMessage returns it. */
  sign(message: Uint8Array): Uint8Array {
    return sign(null, message, this.privateKey);
  }

  /** What `solana:signIn` answers for an input: the SIWS text for this address, and its signature. */
  signIn(input: Record<string, unknown>): { signedMessage: Uint8Array; signature: Uint8Array } {
    const text = createSignInMessageText({ ...input, address: this.address } as Parameters<
      typeof createSignInMessageText
    >[0]);
    const signedMessage = new TextEncoder().encode(text);
    return { signedMessage, signature: this.sign(signedMessage) };
  }
}

/** The body POST /dashboard/api/auth/verify takes. */
export function verifyBody(address: string, signed: { signedMessage: Uint8Array; signature: Uint8Array }) {
  return {
    output: {
      account: { address },
      signedMessage: Buffer.from(signed.signedMessage).toString('base64'),
      signature: Buffer.from(signed.signature).toString('base64'),
    },
  };
}
