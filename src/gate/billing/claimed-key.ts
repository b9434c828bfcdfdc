import { releaseKey } from '../../idempotency/index.js';
import { replay, sendStored } from './request.js';
import type { Keyed, RouteCall } from './route-billing.js';

/**
 * Runs a keyed request of a route that writes before it answers (free routes, routes billed in
 * their transaction): its key is claimed first — a retry of an answered request gets the stored
 * answer — and `run` stores the answer. When `run` fails nothing was charged or created: the key
 * goes back, and a retry runs afresh.
 */
export async function withClaimedKey(
  call: RouteCall,
  keyed: Keyed,
  run: () => Promise<string>,
): Promise<string> {
  const claim = await call.services.keyClaimer.claim(keyed.scope, keyed.print);
  if (claim.kind === 'replay') return replay(call.reply, claim);
  try {
    return sendStored(call.reply, await run());
  } catch (err) {
    await releaseKey(call.services.db, keyed.scope).catch((releaseError: unknown) =>
      call.request.log.error({ err: releaseError }, 'could not release an idempotency key'),
    );
    throw err;
  }
}
