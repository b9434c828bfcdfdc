import { AppError } from '../errors.js';
import { cidrContains, formatIp, type IpAddress } from '../lib/ip.js';
import type { Principal } from './authenticate.js';

/**
 * Whether a browser origin (`scheme://host[:port]`) is on a key's list. Entries are stored
 * canonical (see settings.ts); `https://*.example.com` matches any subdomain, not the apex.
 */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin === 'null') return false;
  const candidate = url.origin;
  for (const entry of allowed) {
    if (entry === candidate) return true;
    const wildcard = /^(https?:)\/\/\*\.(.+)$/.exec(entry);
    if (!wildcard) continue;
    const [, scheme, hostAndPort] = wildcard;
    if (url.protocol !== scheme) continue;
    if (url.host.endsWith(`.${hostAndPort}`)) return true;
  }
  return false;
}

/**
 * The key's IP and origin restrictions. The origin list guards against browser misuse only:
 * non-browser clients can send any Origin, so it is not authentication (docs/api.md#restrictions).
 */
export function checkRestrictions(
  principal: Principal,
  clientOf: () => IpAddress | null,
  origin: string | undefined,
): void {
  const v = principal.verification;
  // The client address is only worked out for keys that need it: most keys have no IP list.
  const client = v.ipRestrictionEnabled ? clientOf() : null;
  if (
    v.ipRestrictionEnabled &&
    (client === null || !v.allowedIps.some((cidr) => cidrContains(cidr, client)))
  ) {
    throw new AppError(
      'IP_NOT_ALLOWED',
      `This API key cannot be used from ${client ? formatIp(client) : 'this address'}`,
      {
        details: { ip: client ? formatIp(client) : null },
      },
    );
  }
  if (v.originRestrictionEnabled && origin !== undefined && !originAllowed(origin, v.allowedOrigins)) {
    throw new AppError(
      'ORIGIN_NOT_ALLOWED',
      `This API key cannot be used from the origin ${origin.slice(0, 200)}`,
      {
        details: { origin: origin.slice(0, 200) },
      },
    );
  }
}
