import { AppError } from '../../errors.js';

/**
 * How many event streams may be open at once (docs/api.md#event-streams): per key, per account, per
 * client address — counted across every API instance when they share Redis — and per process. The
 * webhook, price and market streams count together: one count per scope, whatever the stream.
 */
export interface StreamLimits {
  perKey: number;
  perAccount: number;
  perAddress: number;
  perProcess: number;
}

export type StreamLimitName = keyof StreamLimits;

/** One shared count a stream takes a slot in: which limit, whose (a key id, an account id, an address), how many. */
export interface SlotScope {
  limit: Exclude<StreamLimitName, 'perProcess'>;
  owner: string;
  max: number;
}

/** The scope that was full, and how many streams it holds. */
export interface SlotRefusal {
  scope: SlotScope;
  open: number;
}

/** A stream's slots, as the holder of open streams renews them. */
export interface HeldSlots {
  id: string;
  scopes: readonly SlotScope[];
}

/**
 * The counts of the shared scopes. `take` is all or nothing: a stream holds a slot in every scope or
 * in none. Implementations: this process's (`LocalStreamSlots`), or Redis leases that every instance
 * shares (`redis-slots.ts`), which a crashed instance's streams leave when their lease lapses.
 */
export interface StreamSlots {
  /** Takes a slot in each scope for stream `id`, or answers the first scope that is full. */
  take(id: string, scopes: readonly SlotScope[], nowMs: number): Promise<SlotRefusal | null>;
  /** Keeps the open streams' slots (called every few seconds while any is open). */
  renew(held: readonly HeldSlots[], nowMs: number): Promise<void>;
  /** Gives a closed stream's slots back. */
  release(id: string, scopes: readonly SlotScope[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long a shared slot lasts without renewal, and how often the holder of open streams renews
 * theirs: an instance that dies without closing its streams (SIGKILL, a lost host) gives their slots
 * back at most LEASE_MS after its last renewal. A renewal every RENEW_MS leaves two of slack.
 */
export const LEASE_MS = 30_000;
export const RENEW_MS = 10_000;

/** What an open stream holds its slots for: the key and account it was opened with, the client's address. */
export interface StreamOwner {
  keyId: string;
  accountId: string;
  address: string;
}

export function scopesOf(owner: StreamOwner, limits: StreamLimits): SlotScope[] {
  return [
    { limit: 'perKey', owner: owner.keyId, max: limits.perKey },
    { limit: 'perAccount', owner: owner.accountId, max: limits.perAccount },
    { limit: 'perAddress', owner: owner.address, max: limits.perAddress },
  ];
}

const WHOSE: Record<StreamLimitName, string> = {
  perKey: 'This key',
  perAccount: 'This account',
  perAddress: 'This client address',
  perProcess: 'This server',
};

/**
 * 429 STREAM_LIMIT_EXCEEDED naming the limit in `details.limit`. Waiting does not free a slot of the
 * caller's own (closing one of its streams does), so only the per-process limit, which another
 * instance may not have reached, says when to retry.
 */
export function streamLimitError(limit: StreamLimitName, max: number, open: number): AppError {
  return new AppError(
    'STREAM_LIMIT_EXCEEDED',
    limit === 'perProcess'
      ? `This server holds its limit of ${max} open event streams; retry (another instance may answer)`
      : `${WHOSE[limit]} already holds ${open} open event streams (at most ${max}); close one first`,
    {
      details: { limit, max, open },
      ...(limit === 'perProcess' ? { headers: { 'retry-after': '5' } } : {}),
    },
  );
}

/** The counts in this process: exact for one instance; each instance has its own. */
export class LocalStreamSlots implements StreamSlots {
  private readonly held = new Map<string, Set<string>>();

  async take(id: string, scopes: readonly SlotScope[]): Promise<SlotRefusal | null> {
    for (const scope of scopes) {
      const open = this.held.get(keyOf(scope))?.size ?? 0;
      if (open >= scope.max) return { scope, open };
    }
    for (const scope of scopes) {
      const key = keyOf(scope);
      const streams = this.held.get(key) ?? new Set<string>();
      streams.add(id);
      this.held.set(key, streams);
    }
    return null;
  }

  async renew(): Promise<void> {}

  async release(id: string, scopes: readonly SlotScope[]): Promise<void> {
    for (const scope of scopes) {
      const key = keyOf(scope);
      const streams = this.held.get(key);
      streams?.delete(id);
      if (streams?.size === 0) this.held.delete(key);
    }
  }

  async close(): Promise<void> {}
}

function keyOf(scope: SlotScope): string {
  return `${scope.limit}:${scope.owner}`;
}
