import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { credentialInUrl, keyInUrlError, type Principal } from '../keys/index.js';
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
