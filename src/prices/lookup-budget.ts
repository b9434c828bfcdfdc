import type { VenueName } from './types.js';

const WINDOW_MS = 60_000;
/** Windows kept before the ones no call is left in are dropped (one per venue and asking account). */
const MAX_WINDOWS = 10_000;

/**
 * How many calls each venue may receive about mints outside the token registry in any 60 seconds
 * (docs/prices.md#mints-outside-the-registry), and how many of them for one account. Any well-formed
 * mint is a new token a client can ask about, so these calls are bounded apart from the registry's,
 * which never wait for them: however many mints clients ask about, a venue that rate-limits is not
 * pushed past its limit and keeps answering for the listed tokens, and one account spends at most
 * its share of a venue's budget, so it cannot spend the others'. A rolling window rather than a
 * bucket: a venue counts its limit per minute, and a full bucket plus a minute's refill would send
 * it twice the budget in one.
 */
export class LookupBudget {
  /** Per venue, and per venue and account, the times of the calls of the last window, oldest first. */
  private readonly calls = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly perAccount: number,
  ) {}

  /**
   * Takes a call for `venue` at `nowMs`, asked by `accountId` when an account asked (its share and the
   * venue's budget both count it): null when taken, else when the next one may be made.
   */
  take(venue: VenueName, nowMs: number, accountId?: string): number | null {
    if (this.calls.size > MAX_WINDOWS) this.sweep(nowMs);
    const venueCalls = this.window(venue, nowMs);
    const accountCalls = accountId === undefined ? null : this.window(`${venue}\u0000${accountId}`, nowMs);
    let retryAt: number | null = null;
    if (venueCalls.length >= this.perMinute) retryAt = (venueCalls[0] as number) + WINDOW_MS;
    if (accountCalls && accountCalls.length >= this.perAccount) {
      retryAt = Math.max(retryAt ?? 0, (accountCalls[0] as number) + WINDOW_MS);
    }
    if (retryAt !== null) return retryAt;
    venueCalls.push(nowMs);
    accountCalls?.push(nowMs);
    return null;
  }

  /** The calls of `key`'s last window, the older ones dropped. */
  private window(key: string, nowMs: number): number[] {
    let times = this.calls.get(key);
    if (!times) {
      times = [];
      this.calls.set(key, times);
    }
    let expired = 0;
    while (expired < times.length && (times[expired] as number) <= nowMs - WINDOW_MS) expired++;
    if (expired > 0) times.splice(0, expired);
    return times;
  }

  /** Drops the windows no call of the last minute is left in (accounts that stopped asking). */
  private sweep(nowMs: number): void {
    for (const [key, times] of this.calls) {
      const last = times[times.length - 1];
      if (last === undefined || last <= nowMs - WINDOW_MS) this.calls.delete(key);
    }
  }
}
