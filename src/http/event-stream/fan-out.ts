import type { Database } from '../../db/database.js';
import type { Log } from '../../logger.js';

/**
 * A reader woken by notifications: one read at a time, and one more if woken while reading, so a
 * burst of notifications costs at most two reads, never one each.
 */
export function foldedWakes(read: () => Promise<void>, onError: (err: unknown) => void): () => void {
  let running = false;
  let again = false;
  const wake = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void read()
      .catch(onError)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          wake();
        }
      });
  };
  return wake;
}

/**
 * One LISTEN per process on a channel whose notifications name a topic in their payload (an
 * account, a market), fanned out to the streams subscribed to that topic: a change reaches each
 * process once, whatever its number of subscribers. The LISTEN is held only while someone is
 * subscribed. An empty payload wakes every subscriber: the database sends one after a lost listening
 * connection is restored, when any notification may have been missed.
 */
export class NotificationFanOut {
  private readonly topics = new Map<string, Set<() => void>>();
  private subscribers = 0;
  private listening: Promise<() => Promise<void>> | undefined;

  constructor(
    private readonly db: Pick<Database, 'listen'>,
    private readonly channel: string,
    private readonly log: Log,
  ) {}

  /** Calls `wake` on each notification of `topic`; resolves once listening, with the unsubscribe. */
  async subscribe(topic: string, wake: () => void): Promise<() => void> {
    const wakes = this.topics.get(topic) ?? new Set();
    wakes.add(wake);
    this.topics.set(topic, wakes);
    this.subscribers += 1;
    const unsubscribe = () => {
      if (!wakes.delete(wake)) return;
      if (wakes.size === 0) this.topics.delete(topic);
      this.subscribers -= 1;
      if (this.subscribers === 0) this.stopListening();
    };
    this.listening ??= this.db.listen(this.channel, (payload) => this.notified(payload));
    try {
      await this.listening;
    } catch (err) {
      this.listening = undefined;
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  private notified(topic: string): void {
    if (topic === '') for (const wakes of this.topics.values()) for (const wake of wakes) wake();
    else for (const wake of this.topics.get(topic) ?? []) wake();
  }

  private stopListening(): void {
    const listening = this.listening;
    this.listening = undefined;
    void listening
      ?.then((stop) => stop())
      .catch((err: unknown) => this.log.warn({ err }, `event streams: UNLISTEN ${this.channel} failed`));
  }
}
