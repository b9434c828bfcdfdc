import { useEffect, useState } from 'preact/hooks';
import type { Mode } from './api';

/** The pages, by their path under /dashboard/{mode}/. */
export const PAGES = [
  { path: '', title: 'Home' },
  { path: 'funds', title: 'Add funds' },
  { path: 'usage', title: 'Usage' },
  { path: 'keys', title: 'Keys' },
  { path: 'activity', title: 'Activity' },
  { path: 'markets', title: 'Markets' },
] as const;

export type PagePath = (typeof PAGES)[number]['path'];

export interface Location {
  mode: Mode;
  page: PagePath;
}

/** `/dashboard/sandbox/keys` → sandbox, keys; anything unknown → live, home. */
export function parseLocation(pathname: string): Location {
  const [, , modePart = '', pagePart = ''] = pathname.split('/');
  const mode: Mode = modePart === 'sandbox' ? 'sandbox' : 'live';
  const page = PAGES.find((p) => p.path === pagePart)?.path ?? '';
  return { mode, page };
}

export function href({ mode, page }: Location): string {
  return `/dashboard/${mode}/${page}`;
}

/** The current location, following links and the back button (History API). */
export function useLocation(): [Location, (to: Location) => void] {
  const [location, setLocation] = useState(() => parseLocation(window.location.pathname));
  useEffect(() => {
    const onPop = () => setLocation(parseLocation(window.location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = (to: Location) => {
    window.history.pushState(null, '', href(to));
    setLocation(to);
  };
  return [location, navigate];
}
