import { describe, expect, it } from 'vitest';
import {
  makeSignInInput,
  readSignedMessage,
  type SignInInput,
  signInMessageText,
  verifyWalletSignature,
} from '../../src/dashboard/siws.js';
import { encodeBase58 } from '../../src/lib/base58.js';
import { TestWallet } from '../helpers/wallet.js';

const hex = (text: string) => Uint8Array.from(Buffer.from(text, 'hex'));

// RFC 8032 §7.1, tests 1 and 2: fixed keys, messages and signatures, independent of Node's signer.
const RFC8032 = [
  {
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

const INPUT: SignInInput = {
  domain: 'app.example.com',
  uri: 'https://app.example.com',
  statement: 'Sign in to the Sibyl dashboard.',
  version: '1',
  chainId: 'mainnet',
  nonce: '4Zq9Lx2bVt7Hc3NmRw8Jk5',
  issuedAt: '2026-11-23T10:00:00.000Z',
  expirationTime: '2026-11-23T10:05:00.000Z',
};
const ADDRESS = 'FgWEHA5B4nJ9gV8iDL3n8p1wvvXH5bX3Nn4Zz7jqF1uv';

describe('the SIWS text', () => {
  it('is the Wallet Standard format, field by field (Phantom’s SIWS)', () => {
    expect(signInMessageText(INPUT, ADDRESS)).toBe(
      [
        'app.example.com wants you to sign in with your Solana account:',
        ADDRESS,
        '',
        'Sign in to the Sibyl dashboard.',
        '',
        'URI: https://app.example.com',
        'Version: 1',
        'Chain ID: mainnet',
        'Nonce: 4Zq9Lx2bVt7Hc3NmRw8Jk5',
        'Issued At: 2026-11-23T10:00:00.000Z',
        'Expiration Time: 2026-11-23T10:05:00.000Z',
      ].join('\n'),
    );
  });

  it('puts a port in the domain, and reads back the domain, URI and nonce a message claims', () => {
    const local = { ...INPUT, domain: '127.0.0.1:3000', uri: 'http://127.0.0.1:3000' };
    const text = signInMessageText(local, ADDRESS);
    expect(text.startsWith('127.0.0.1:3000 wants you to sign in with your Solana account:\n')).toBe(true);
    expect(readSignedMessage(new TextEncoder().encode(text))).toEqual({
      domain: '127.0.0.1:3000',
      uri: 'http://127.0.0.1:3000',
      nonce: INPUT.nonce,
    });
    expect(readSignedMessage(new TextEncoder().encode('hello'))).toBeNull();
    expect(readSignedMessage(Uint8Array.from([0xff, 0xfe]))).toBeNull();
  });

  it('makes inputs with a fresh nonce of at least 16 base58 characters, valid 5 minutes', () => {
    const now = new Date('2026-11-23T10:00:00Z');
    const place = { domain: 'app.example.com', uri: 'https://app.example.com', chainId: 'devnet' };
    const a = makeSignInInput(place, now);
    const b = makeSignInInput(place, now, ADDRESS);
    expect(a).toEqual({
      ...INPUT,
      chainId: 'devnet',
      nonce: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{16,}$/),
    });
    expect(b.address).toBe(ADDRESS);
    expect(a.nonce).not.toBe(b.nonce);
  });
});

describe('the signature check', () => {
  it('accepts the RFC 8032 test vectors and refuses them altered', () => {
    for (const vector of RFC8032) {
      const address = encodeBase58(hex(vector.publicKey));
      const message = hex(vector.message);
      const signature = hex(vector.signature);
      expect(verifyWalletSignature(address, message, signature)).toBe(true);
      const altered = Uint8Array.from(signature);
      altered[10] = (altered[10] as number) ^ 1;
      expect(verifyWalletSignature(address, message, altered)).toBe(false);
      expect(verifyWalletSignature(address, Uint8Array.from([...message, 0]), signature)).toBe(false);
    }
    const [first, second] = RFC8032;
    expect(
      verifyWalletSignature(
        encodeBase58(hex(second?.publicKey as string)),
        hex(first?.message as string),
        hex(first?.signature as string),
      ),
    ).toBe(false);
  });

  it('refuses signatures of the wrong size, the all-zero key, and text that is not base58', () => {
    const wallet = new TestWallet();
    const message = new TextEncoder().encode('sign in');
    const signature = wallet.sign(message);
    expect(verifyWalletSignature(wallet.address, message, signature)).toBe(true);
    expect(verifyWalletSignature(wallet.address, message, signature.subarray(0, 63))).toBe(false);
    expect(verifyWalletSignature('11111111111111111111111111111111', message, signature)).toBe(false);
    expect(verifyWalletSignature('not-base58', message, signature)).toBe(false);
  });
});
