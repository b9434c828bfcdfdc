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
  /** One thing the page shows on its own: a market's id, `/dashboard/{mode}/markets/{id}`. */
  item?: string;
}

/** Pages that show one of their things at an address of its own. */
const WITH_ITEMS: readonly PagePath[] = ['markets'];

/** `/dashboard/sandbox/keys` → sandbox, keys; anything unknown → live, home. */
export function parseLocation(pathname: string): Location {
  const [, , modePart = '', pagePart = '', itemPart = ''] = pathname.split('/');
  const mode: Mode = modePart === 'sandbox' ? 'sandbox' : 'live';
  const page = PAGES.find((p) => p.path === pagePart)?.path ?? '';
  const item = WITH_ITEMS.includes(page) && itemPart ? decoded(itemPart) : undefined;
  return item ? { mode, page, item } : { mode, page };
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** A dot is escaped too: a last segment like `.json` would be taken for a file (src/dashboard/routes/static.ts). */
export function href({ mode, page, item }: Location): string {
  const tail = item ? `/${encodeURIComponent(item).replaceAll('.', '%2E')}` : '';
  return `/dashboard/${mode}/${page}${tail}`;
}

/** The current location, following links and the back button (History API). */
export function useLocation(): [Location, (to: Location) => void] {
  const [location, setLocation] = useState(() => parseLocation(window.location.pathname));
  useEffect(() => {
    const onPop = () => setLocation(parseLocation(window.location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  // A new page starts at its top, where the eye is (a market opened from far down the list too).
  const navigate = (to: Location) => {
    window.history.pushState(null, '', href(to));
    setLocation(to);
    window.scrollTo(0, 0);
  };
  return [location, navigate];
}
