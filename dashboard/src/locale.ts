/**
 * Runs before any other module of the page (main.tsx imports it first): a browser may report a
 * language tag Intl refuses — `en-US@posix` from a POSIX locale — and a library that formats numbers
 * with `new Intl.NumberFormat(navigator.language)` when it loads (uPlot) would throw, leaving the
 * page blank. Such a tag is replaced by a default the page is written in.
 */
export const DEFAULT_LOCALE = 'en-US';

function usable(tag: string | undefined): boolean {
  if (!tag) return false;
  try {
    new Intl.NumberFormat(tag);
    return true;
  } catch {
    return false;
  }
}

if (typeof navigator !== 'undefined' && !usable(navigator.language)) {
  const languages = (navigator.languages ?? []).filter(usable);
  const language = languages[0] ?? DEFAULT_LOCALE;
  Object.defineProperty(navigator, 'language', { value: language, configurable: true });
  Object.defineProperty(navigator, 'languages', {
    value: Object.freeze(languages.length > 0 ? languages : [language]),
    configurable: true,
  });
}

/**
 * Also first: if a module of the page still fails as it loads, or the app cannot start, the page
 * says so instead of staying blank.
 */
export function showStartFailure(error: unknown): void {
  const root = document.getElementById('app');
  if (!root || root.querySelector('.start-failure')) return;
  const box = document.createElement('div');
  box.className = 'start-failure';
  box.setAttribute('role', 'alert');
  const title = document.createElement('h1');
  title.textContent = 'The dashboard could not start';
  const text = document.createElement('p');
  text.textContent =
    'Reload the page; if it happens again, try another browser and tell the operator what it says below.';
  const detail = document.createElement('pre');
  detail.textContent = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  box.append(title, text, detail);
  root.replaceChildren(box);
}

if (typeof window !== 'undefined') {
  // An exception while a module loads is reported here, not to any code of the page.
  window.addEventListener('error', (event) => {
    if (!document.querySelector('#app > *:not(.start-failure)'))
      showStartFailure(event.error ?? event.message);
  });
}
