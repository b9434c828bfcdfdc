import chromium from '@sparticuz/chromium';
import { type Browser, type BrowserContext, type Page, chromium as playwright } from 'playwright-core';
import { decodeBase58 } from '../../src/lib/base58.js';
import type { TestWallet } from './wallet.js';

/**
 * A real headless Chromium for dashboard tests, installed from the npm registry
 * (@sparticuz/chromium ships the browser; playwright-core drives it): `npm test` needs no system
 * package and no network. One browser per test file; a page per test.
 */
export async function launchBrowser(): Promise<Browser> {
  return playwright.launch({
    executablePath: await chromium.executablePath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * A fresh browser context (its own cookies) at a fixed size, locale and zone, so pages and
 * screenshots look the same on every machine (a POSIX locale such as `en-US@posix` is not a valid
 * language tag, and Intl throws on it).
 */
export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({
    locale: 'en-US',
    timezoneId: 'UTC',
    viewport: { width: 1280, height: 860 },
    deviceScaleFactor: 1,
  });
}

/** What the page-side wallet can do: `solana:signIn` (it builds the text itself) or only `solana:signMessage`. */
export type WalletKind = 'signIn' | 'signMessage';

interface PageWallet {
  address: string;
  publicKey: number[];
  name: string;
  withSignIn: boolean;
  /** The names of the functions Node exposes to the page for this wallet. */
  signInFn: string;
  signMessageFn: string;
}

let installed = 0;

/**
 * Registers a Solana wallet in the page through the Wallet Standard (the `register-wallet` event and
 * the `app-ready` answer, as installed wallets do), before any page script runs. Its key stays in
 * Node: the page asks Node to sign (exposeFunction), and Node signs with crypto.sign.
 */
export async function installWallet(
  page: Page,
  wallet: TestWallet,
  kind: WalletKind,
  name = kind === 'signIn' ? 'Test Wallet' : 'Test Wallet (signMessage)',
): Promise<string> {
  // One page may hold several wallets (linking a second one): each has its own signing functions.
  installed += 1;
  const signInFn = `sibylWalletSignIn${installed}`;
  const signMessageFn = `sibylWalletSignMessage${installed}`;
  await page.exposeFunction(signInFn, (input: string) => {
    const signed = wallet.signIn(JSON.parse(input) as Record<string, unknown>);
    return {
      signedMessage: Buffer.from(signed.signedMessage).toString('base64'),
      signature: Buffer.from(signed.signature).toString('base64'),
    };
  });
  await page.exposeFunction(signMessageFn, (message: string) =>
    Buffer.from(wallet.sign(Buffer.from(message, 'base64'))).toString('base64'),
  );
  const described: PageWallet = {
    address: wallet.address,
    publicKey: [...(decodeBase58(wallet.address) as Uint8Array)],
    name,
    withSignIn: kind === 'signIn',
    signInFn,
    signMessageFn,
  };
  await page.addInitScript(registerWallet, described);
  return name;
}

/** Runs in the page: the wallet object of the Wallet Standard, with its features. */
function registerWallet(described: PageWallet): void {
  type Signer = {
    signIn(input: string): Promise<{ signedMessage: string; signature: string }>;
    signMessage(message: string): Promise<string>;
  };
  // The page's window (typed here without the DOM library), and this wallet's functions on it.
  const page = globalThis as unknown as EventTarget & Record<string, unknown>;
  const signer: Signer = {
    signIn: (input) => (page[described.signInFn] as Signer['signIn'])(input),
    signMessage: (message) => (page[described.signMessageFn] as Signer['signMessage'])(message),
  };
  const bytes = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const base64 = (data: Uint8Array) => btoa(String.fromCharCode(...data));
  const chains = ['solana:mainnet', 'solana:devnet'] as const;
  const account = {
    address: described.address,
    publicKey: new Uint8Array(described.publicKey),
    chains,
    features: described.withSignIn ? ['solana:signIn', 'solana:signMessage'] : ['solana:signMessage'],
  };
  const features: Record<string, unknown> = {
    'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
    'standard:events': { version: '1.0.0', on: () => () => {} },
    'solana:signMessage': {
      version: '1.0.0',
      signMessage: async (...inputs: { message: Uint8Array }[]) =>
        Promise.all(
          inputs.map(async ({ message }) => ({
            signedMessage: message,
            signature: bytes(await signer.signMessage(base64(message))),
          })),
        ),
    },
  };
  if (described.withSignIn) {
    features['solana:signIn'] = {
      version: '1.0.0',
      signIn: async (...inputs: unknown[]) =>
        Promise.all(
          inputs.map(async (input) => {
            const signed = await signer.signIn(JSON.stringify(input));
            return {
              account,
              signedMessage: bytes(signed.signedMessage),
              signature: bytes(signed.signature),
            };
          }),
        ),
    };
  }
  const wallet = {
    version: '1.0.0',
    name: described.name,
    icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiLz4=',
    chains,
    features,
    accounts: [account],
  };
  const register = ({ register }: { register: (w: unknown) => void }) => register(wallet);
  page.addEventListener('wallet-standard:app-ready', (event) =>
    register((event as CustomEvent<{ register: (w: unknown) => void }>).detail),
  );
  page.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
}
