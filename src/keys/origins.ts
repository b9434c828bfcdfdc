import { parse as parseDomain } from 'tldts';

/**
 * Browser origins on a key's allow list: `scheme://host[:port]` exactly as browsers send it, or a
 * wildcard `https://*.example.com` that admits any subdomain (not the apex). This is the one place
 * that reads and matches them.
 */

const WILDCARD = /^(https?):\/\/\*\.(.+)$/i;

const NOT_AN_ORIGIN = 'is not an origin like https://app.example.com';
const WILDCARD_TOO_WIDE =
  'puts a wildcard over a public suffix or an address: a wildcard stands for the subdomains of a domain someone owns, like https://*.example.com';

/**
 * The canonical form of an allow-list entry, or why it is refused: paths, queries, credentials and
 * schemes other than http(s) are not origins, and a wildcard must stand for the subdomains of a
 * registrable domain — never of a public suffix (`https://*.com`, `https://*.co.uk`, or a shared
 * host such as `github.io`, by the Public Suffix List in the `tldts` package) or of an address.
 */
export function normaliseOrigin(entry: string): { origin: string } | { error: string } {
  const text = entry.trim();
  const wildcard = WILDCARD.exec(text);
  const candidate = wildcard ? `${wildcard[1]}://${wildcard[2]}` : text;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return { error: NOT_AN_ORIGIN };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: NOT_AN_ORIGIN };
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    return { error: NOT_AN_ORIGIN };
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(candidate) || url.hostname.includes('*')) {
    return { error: NOT_AN_ORIGIN };
  }
  if (!wildcard) return { origin: url.origin };
  if (parseDomain(url.hostname, { allowPrivateDomains: true }).domain === null) {
    return { error: WILDCARD_TOO_WIDE };
  }
  return { origin: `${url.protocol}//*.${url.host}` };
}

/** The serialised origin of an `Origin` header (lower-case host, default port dropped), or null. */
export function serialiseOrigin(origin: string): string | null {
  return originUrl(origin)?.origin ?? null;
}

function originUrl(origin: string): URL | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.origin === 'null' ? null : url;
}

/** Whether the canonical wildcard entry admits `url` (a subdomain of its host, same scheme and port). */
function wildcardAdmits(entry: string, url: URL): boolean {
  const wildcard = WILDCARD.exec(entry);
  if (!wildcard) return false;
  return url.protocol === `${wildcard[1]}:` && url.host.endsWith(`.${wildcard[2]}`);
}

/**
 * The serialised origin when `origin` is on the list (exactly, or through a wildcard entry); null
 * when it is not. Entries are stored canonical (normaliseOrigin).
 */
export function matchOrigin(origin: string, allowed: readonly string[]): string | null {
  const url = originUrl(origin);
  if (!url) return null;
  const candidate = url.origin;
  for (const entry of allowed) {
    if (entry === candidate || wildcardAdmits(entry, url)) return candidate;
  }
  return null;
}

/** Whether the canonical entry `entry` admits no origin that `allowed` does not (for key bounds). */
export function originEntryWithin(entry: string, allowed: readonly string[]): boolean {
  if (allowed.includes(entry)) return true;
  if (entry.includes('*')) return false;
  return matchOrigin(entry, allowed) !== null;
}
