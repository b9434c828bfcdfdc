import type { FastifyReply, FastifyRequest } from 'fastify';
import { validationError } from '../errors.js';
import { fingerprint, readIdempotencyKey } from '../idempotency/index.js';
import type { Principal } from '../keys/index.js';
import type { RouteBilling } from './billing/route-billing.js';
import type { Services } from './services.js';

/** How a route reads the `Idempotency-Key` header (chosen once per route): the key, or none. */
export type KeyReader = (header: string | string[] | undefined) => string | undefined;

export function keyReader(spec: { method: string; operationId: string; idempotent?: boolean }): KeyReader {
  if (spec.method === 'GET') {
    if (spec.idempotent) throw new Error(`${spec.operationId}: a GET takes no Idempotency-Key`);
    // A GET changes nothing to retry safely: its key is ignored (docs/api.md#idempotency), and a
    // retried GET is a new request with a fresh answer.
    return () => undefined;
  }
  if (spec.idempotent) return readIdempotencyKey;
  return (header) => {
    if (header === undefined) return undefined;
    throw validationError([
      {
        path: 'header.idempotency-key',
        message: 'is not accepted by this operation (docs/api.md#idempotency)',
      },
    ]);
  };
}

/**
 * Runs one request of a declared route after authentication and validation, by its route's billing
 * strategy (./billing/choose.ts): with its Idempotency-Key, or without. Errors propagate to the
 * error handler; nothing is charged or stored for them.
 */
export async function handleRoute(
  billing: RouteBilling,
  keyOf: KeyReader,
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<object | string | Buffer> {
  const principal = request.principal as Principal;
  const call = { services, request, reply, principal };
  const key = keyOf(request.headers['idempotency-key']);
  if (key === undefined) return billing.run(call);
  const scope = { accountId: principal.accountId, key, requestId: request.id };
  return billing.runKeyed(call, { scope, print: fingerprint(request.method, request.url, request.body) });
}
