import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Mode, SessionView } from '../api';
import { shortAddress, usd } from '../format';
import { href, type Location, PAGES } from '../router';

interface Props {
  session: SessionView;
  location: Location;
  navigate: (to: Location) => void;
  onSignOut: () => void;
  children: ComponentChildren;
}

/**
 * The frame of every page: the live/sandbox switch, the navigation, the wallet and sign-out. On a
 * narrow screen (a phone, a wallet's in-app browser) the navigation and the wallet fold into a menu
 * button; a new page is one entry of PAGES (router.ts), in both.
 */
export function Layout({ session, location, navigate, onSignOut, children }: Props) {
  const [menuOpen, setMenuOpen] = useState(false);
  const go = (to: Location) => (event: MouseEvent) => {
    event.preventDefault();
    setMenuOpen(false);
    navigate(to);
  };
  const title = PAGES.find((p) => p.path === location.page)?.title ?? 'Home';
  return (
    <div class={`shell mode-${location.mode}${menuOpen ? ' menu-open' : ''}`}>
      <header class="top">
        <span class="brand">Sibyl</span>
        <nav class="modes" aria-label="Account">
          {(['live', 'sandbox'] as Mode[]).map((mode) => (
            <a
              key={mode}
              href={href({ ...location, mode })}
              class={mode === location.mode ? 'mode active' : 'mode'}
              aria-current={mode === location.mode ? 'true' : undefined}
              onClick={go({ ...location, mode })}
            >
              {mode === 'live' ? 'Live' : 'Sandbox'} · {usd(session.accounts[mode].balanceUsd)}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="side"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
      </header>
      <div class="side" id="side">
        <nav aria-label="Pages">
          {PAGES.map((page) => (
            <a
              key={page.path}
              href={href({ mode: location.mode, page: page.path })}
              aria-current={page.path === location.page ? 'page' : undefined}
              onClick={go({ mode: location.mode, page: page.path })}
            >
              {page.title}
            </a>
          ))}
        </nav>
        <div class="account-box">
          <span class="wallet" title={session.wallet}>
            {shortAddress(session.wallet)}
          </span>
          <button type="button" class="secondary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </div>
      <main>
        <h1>
          {title} <span class="badge">{location.mode}</span>
        </h1>
        {location.mode === 'sandbox' && (
          <p class="note">Sandbox: simulated prices and models, play money. Keys start with pk_test_.</p>
        )}
        {children}
      </main>
    </div>
  );
}
