import type { Wallet } from '@wallet-standard/base';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, useAction } from '../components/ui';
import { signInWith, watchWallets } from '../wallet';

/** Connect a Solana wallet: the first sign-in creates the wallet's live and sandbox accounts. */
export function SignIn({ onSignedIn }: { onSignedIn: (created: boolean) => void }) {
  const [wallets, setWallets] = useState<readonly Wallet[]>([]);
  const { busy, error, run } = useAction();
  useEffect(() => watchWallets(setWallets), []);
  return (
    <main class="sign-in">
      <h1>Sibyl</h1>
      <p>Prices, AI resolution and market data for Solana prediction markets, paid as you go.</p>
      <h2>Sign in with your Solana wallet</h2>
      <p class="muted">
        Your wallet signs a one-time message (no transaction, no fee). The first sign-in creates your account,
        and a sandbox account with play money.
      </p>
      {wallets.length === 0 ? (
        <p class="note" role="status">
          No Solana wallet found in this browser. Install one that supports the Wallet Standard (Phantom,
          Solflare, Backpack…) and reload.
        </p>
      ) : (
        <ul class="wallets">
          {wallets.map((wallet) => (
            <li key={wallet.name}>
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  run(async () => {
                    const { created } = await signInWith(wallet);
                    onSignedIn(created);
                  })
                }
              >
                <img src={wallet.icon} alt="" width={24} height={24} /> Sign in with {wallet.name}
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={error} />
    </main>
  );
}
