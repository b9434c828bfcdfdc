import {
  SolanaSignIn,
  type SolanaSignInFeature,
  SolanaSignMessage,
  type SolanaSignMessageFeature,
} from '@solana/wallet-standard-features';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { getWallets } from '@wallet-standard/app';
import type { Wallet } from '@wallet-standard/base';
import { StandardConnect, type StandardConnectFeature } from '@wallet-standard/features';
import { type Answer, api, ok } from './api';
import { toBase64 } from './format';

/**
 * Wallets through the Wallet Standard: every installed wallet that announces itself appears, no
 * per-wallet adapter. A wallet can sign in if it offers `solana:signIn`, or `standard:connect` and
 * `solana:signMessage` (then this page builds the same SIWS text the server expects).
 */
export function canSignIn(wallet: Wallet): boolean {
  const features = wallet.features;
  return (
    wallet.chains.some((chain) => chain.startsWith('solana:')) &&
    (SolanaSignIn in features || (StandardConnect in features && SolanaSignMessage in features))
  );
}

/** The usable wallets now, and a subscription to wallets registering later. */
export function watchWallets(onChange: (wallets: readonly Wallet[]) => void): () => void {
  const registry = getWallets();
  const update = () => onChange(registry.get().filter(canSignIn));
  update();
  const stopRegister = registry.on('register', update);
  const stopUnregister = registry.on('unregister', update);
  return () => {
    stopRegister();
    stopUnregister();
  };
}

type SignedIn = Answer<'dashboardSignInVerify'>;

async function verify(address: string, signedMessage: Uint8Array, signature: Uint8Array): Promise<SignedIn> {
  return ok(
    api.POST('/dashboard/api/auth/verify', {
      body: {
        output: {
          account: { address },
          signedMessage: toBase64(signedMessage),
          signature: toBase64(signature),
        },
      },
    }),
  );
}

/** Signs in with `wallet`: the server's input, the wallet's signature, the server's check. */
export async function signInWith(wallet: Wallet): Promise<SignedIn> {
  const features = wallet.features;
  if (SolanaSignIn in features) {
    const { input } = await ok(api.POST('/dashboard/api/auth/challenge', { body: {} }));
    const [output] = await (features as SolanaSignInFeature)[SolanaSignIn].signIn(input);
    if (!output) throw new Error('The wallet returned no signature');
    return verify(output.account.address, output.signedMessage, output.signature);
  }
  const { accounts } = await (features as StandardConnectFeature)[StandardConnect].connect();
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account');
  const { input } = await ok(
    api.POST('/dashboard/api/auth/challenge', { body: { address: account.address } }),
  );
  const message = new TextEncoder().encode(createSignInMessageText({ ...input, address: account.address }));
  const [output] = await (features as SolanaSignMessageFeature)[SolanaSignMessage].signMessage({
    account,
    message,
  });
  if (!output) throw new Error('The wallet returned no signature');
  return verify(account.address, output.signedMessage, output.signature);
}

type Linked = Answer<'dashboardLinkWallet'>;

/**
 * Links `wallet`'s account to the live account: the wallet's current account is connected, the
 * server makes a link input for that address (its statement names the Sibyl account), the wallet
 * signs it, the server checks it as it checks a sign-in.
 */
export async function linkWith(wallet: Wallet): Promise<Linked> {
  const features = wallet.features;
  if (!(StandardConnect in features)) throw new Error('This wallet cannot share its address');
  const { accounts } = await (features as StandardConnectFeature)[StandardConnect].connect();
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account');
  const { input } = await ok(
    api.POST('/dashboard/api/{mode}/wallets/challenge', {
      params: { path: { mode: 'live' } },
      body: { address: account.address },
    }),
  );
  let signed: { address: string; signedMessage: Uint8Array; signature: Uint8Array };
  if (SolanaSignMessage in features) {
    const message = new TextEncoder().encode(createSignInMessageText({ ...input, address: account.address }));
    const [output] = await (features as SolanaSignMessageFeature)[SolanaSignMessage].signMessage({
      account,
      message,
    });
    if (!output) throw new Error('The wallet returned no signature');
    signed = { address: account.address, ...output };
  } else {
    const [output] = await (features as SolanaSignInFeature)[SolanaSignIn].signIn(input);
    if (!output) throw new Error('The wallet returned no signature');
    signed = { address: output.account.address, ...output };
  }
  return ok(
    api.POST('/dashboard/api/{mode}/wallets', {
      params: { path: { mode: 'live' } },
      body: {
        output: {
          account: { address: signed.address },
          signedMessage: toBase64(signed.signedMessage),
          signature: toBase64(signed.signature),
        },
      },
    }),
  );
}
