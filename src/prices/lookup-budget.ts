import type { VenueName } from './types.js';

const WINDOW_MS = 60_000;

/**
 * How many calls each venue may receive about mints outside the token registry in any 60 seconds
 * (docs/prices.md#mints-outside-the-registry). Any well-formed mint is a new token a client can ask
 * about, so these calls are bounded apart from the registry's, which never wait for them: however
 * many mints clients ask about, a venue that rate-limits is not pushed past its limit and keeps
 * answering for the listed tokens. A rolling window rather than a bucket: a venue counts its limit
 * per minute, and a full bucket plus a minute's refill would send it twice the budget in one.
 */
export class LookupBudget {
  /** Per venue, the times of the calls of the last window, oldest first. */
  private readonly calls = new Map<VenueName, number[]>();

  constructor(private readonly perMinute: number) {}

  /** Takes a call for `venue` at `nowMs`: null when taken, else when the next one may be made. */
  take(venue: VenueName, nowMs: number): number | null {
    let times = this.calls.get(venue);
    if (!times) {
      times = [];
      this.calls.set(venue, times);
    }
    let expired = 0;
    while (expired < times.length && (times[expired] as number) <= nowMs - WINDOW_MS) expired++;
    if (expired > 0) times.splice(0, expired);
    if (times.length >= this.perMinute) return (times[0] as number) + WINDOW_MS;
    times.push(nowMs);
    return null;
  }
}
