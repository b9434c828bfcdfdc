import { AppError, excerpt } from '../errors.js';
import { cidrContains, formatIp, type IpAddress } from '../lib/ip.js';
import type { Principal } from './authenticate.js';
import { matchOrigin } from './origins.js';

/**
 * The key's IP and origin restrictions; answers the serialised origin to allow in CORS headers when
 * the key has an origin list that admits the request's Origin (null otherwise). The origin list guards against browser misuse only:
 * non-browser clients can send any Origin, so it is not authentication (docs/api.md#restrictions).
 */
export function checkRestrictions(
  principal: Principal,
  clientOf: () => IpAddress | null,
  origin: string | undefined,
): string | null {
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
  if (!v.originRestrictionEnabled || origin === undefined) return null;
  const allowed = matchOrigin(origin, v.allowedOrigins);
  if (allowed === null) {
    throw new AppError(
      'ORIGIN_NOT_ALLOWED',
      `This API key cannot be used from the origin ${excerpt(origin)}`,
      {
        details: { origin: excerpt(origin) },
      },
    );
  }
  return allowed;
}
