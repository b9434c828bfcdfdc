import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type SessionView, whenSignedOut } from './api';
import { Layout } from './components/Layout';
import { Activity } from './pages/Activity';
import { Funds } from './pages/Funds';
import { Home } from './pages/Home';
import { Keys } from './pages/Keys';
import { SignIn } from './pages/SignIn';
import { Usage } from './pages/Usage';
import { useLocation } from './router';
import './styles.css';

function App() {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const [location, navigate] = useLocation();
  const refreshSession = () =>
    api<SessionView>('GET', '/auth/session').then(setSession, () => setSession(null));

  useEffect(() => {
    whenSignedOut(() => setSession(null));
  }, []);
  // Balances in the header are read again on every page change (keys spend them meanwhile).
  useEffect(() => {
    refreshSession();
  }, [location.mode, location.page]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={refreshSession} />;

  const { mode, page } = location;
  const props = { mode, onBalanceChange: refreshSession };
  return (
    <Layout
      session={session}
      location={location}
      navigate={navigate}
      onSignOut={async () => {
        await api('POST', '/auth/logout').catch(() => {});
        setSession(null);
      }}
    >
      {page === '' && <Home {...props} navigate={navigate} />}
      {page === 'funds' && <Funds {...props} />}
      {page === 'usage' && <Usage {...props} />}
      {page === 'keys' && <Keys {...props} />}
      {page === 'activity' && <Activity {...props} />}
    </Layout>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
