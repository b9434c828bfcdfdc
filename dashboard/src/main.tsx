import { Component, type ComponentChildren, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type SessionView, whenSignedOut } from './api';
import { Layout } from './components/Layout';
import { showStartFailure } from './locale';
import { Activity } from './pages/Activity';
import { Funds } from './pages/Funds';
import { Home } from './pages/Home';
import { Keys } from './pages/Keys';
import { Markets } from './pages/Markets';
import { SignIn } from './pages/SignIn';
import { Usage } from './pages/Usage';
import { useLocation } from './router';
import './styles.css';

function App() {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const [location, navigate] = useLocation();
  // A wallet's first sign-in: its accounts were just made, and the sandbox has play money.
  const [welcome, setWelcome] = useState(false);
  // The one source of the balances the header shows: read again on every page change and after
  // every billed read or money movement (`onBalanceChange`). Answers may come back out of order
  // (a market's history reads are sent at once): only the latest read's answer is shown.
  const sessionReads = useRef(0);
  const refreshSession = () => {
    const read = ++sessionReads.current;
    return ok(api.GET('/dashboard/api/auth/session')).then(
      (answer) => read === sessionReads.current && setSession(answer),
      () => read === sessionReads.current && setSession(null),
    );
  };

  useEffect(() => {
    whenSignedOut(() => setSession(null));
  }, []);
  // Balances in the header are read again on every page change (keys spend them meanwhile).
  useEffect(() => {
    refreshSession();
  }, [location.mode, location.page]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) {
    return (
      <SignIn
        onSignedIn={(created) => {
          if (created) {
            // Land where the 100.00 of play money is, not on a live account at 0.00.
            setWelcome(true);
            navigate({ mode: 'sandbox', page: '' });
          }
          refreshSession();
        }}
      />
    );
  }

  const { mode, page } = location;
  const props = { mode, onBalanceChange: refreshSession, navigate };
  return (
    <Layout
      session={session}
      location={location}
      navigate={navigate}
      onSignOut={async () => {
        await ok(api.POST('/dashboard/api/auth/logout')).catch(() => {});
        setWelcome(false);
        setSession(null);
      }}
    >
      {page === '' && <Home {...props} welcome={welcome && mode === 'sandbox'} />}
      {page === 'funds' && <Funds {...props} />}
      {page === 'usage' && <Usage {...props} />}
      {page === 'keys' && <Keys {...props} />}
      {page === 'activity' && <Activity {...props} />}
      {page === 'markets' && <Markets {...props} market={location.item} />}
    </Layout>
  );
}

/** A page that throws while rendering shows what happened, not an empty screen. */
class Boundary extends Component<{ children: ComponentChildren }, { error: unknown }> {
  state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  render() {
    if (this.state.error === null) return this.props.children;
    const error = this.state.error;
    return (
      <div class="start-failure" role="alert">
        <h1>Something went wrong on this page</h1>
        <p>Reload the page; if it happens again, tell the operator what it says below.</p>
        <pre>{error instanceof Error ? `${error.name}: ${error.message}` : String(error)}</pre>
      </div>
    );
  }
}

const root = document.getElementById('app') as HTMLElement;
try {
  render(
    <Boundary>
      <App />
    </Boundary>,
    root,
  );
} catch (error) {
  showStartFailure(error);
}
