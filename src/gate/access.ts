import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RoutePermission } from '../http/route-spec.js';
import {
  checkRestrictions,
  credentialInUrl,
  keyInUrlError,
  type Principal,
  requirePermission,
} from '../keys/index.js';
import { clientAddress } from '../lib/client-ip.js';
import { failureAddress } from '../limits/index.js';
import type { Services } from './services.js';

/** The one Authorization header; two are refused rather than one of them picked. */
function authorizationOf(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') seen++;
  }
  if (seen > 1) throw new AppError('INVALID_API_KEY', 'Send exactly one Authorization header');
  return request.headers.authorization;
}

/**
 * Who is calling: the key of the Authorization header, checked for format, existence, expiry,
 * revocation and its account. An address that keeps failing is refused (429) before any lookup;
 * every 401 counts against it.
 */
export async function authenticateRequest(services: Services, request: FastifyRequest): Promise<Principal> {
  const { authenticator, authFailures, clock, config } = services;
  const now = clock.now().getTime();
  const addressOf = () =>
    failureAddress(
      clientAddress(
        request.socket.remoteAddress,
        request.headers['x-forwarded-for'],
        config.access.trustedProxies,
      ),
    );
  const refusal = authFailures.refusal(addressOf, now);
  if (refusal) throw refusal;
  try {
    if (credentialInUrl(request.url)) throw keyInUrlError();
    return await authenticator.authenticate(authorizationOf(request));
  } catch (err) {
    if (!(err instanceof AppError) || err.status !== 401) throw err;
    throw (await authFailures.recordFailure(addressOf(), now)) ?? err;
  }
}

/** The key's IP and origin restrictions for this request; the origin to allow in CORS headers (`checkRestrictions`). */
export function keyRestrictions(
  services: Services,
  request: FastifyRequest,
  principal: Principal,
): string | null {
  const clientOf = () =>
    clientAddress(
      request.socket.remoteAddress,
      request.headers['x-forwarded-for'],
      services.config.access.trustedProxies,
    );
  return checkRestrictions(principal, clientOf, request.headers.origin);
}

/**
 * An admitted request's access as it would be answered now, for what outlives its answer (an open
 * event stream, docs/api.md#event-streams): its key verified again through the verification cache,
 * which the revocation feed keeps current (revoked, expired, its account suspended), then its
 * restrictions and the route's permission. Not counted as a failed authentication: the client did
 * not try again.
 */
export async function recheckKeyAccess(
  services: Services,
  request: FastifyRequest,
  permission: RoutePermission,
): Promise<void> {
  const principal = await services.authenticator.authenticate(authorizationOf(request));
  keyRestrictions(services, request, principal);
  if (permission !== 'any') requirePermission(principal, permission);
}
