import type { Queryable } from '../db/database.js';
import { randomBase58 } from '../lib/ids.js';
import type { AccountEventData, AccountEventType } from './event-types.js';
import { RECORD_EVENT, RECORD_EVENTS } from './events-sql.js';
import { MAX_ATTEMPTS } from './outbox.js';

/** An event id: `evt_` and 24 random base58 characters (~140 bits). */
export function newEventId(): string {
  return `evt_${randomBase58(24)}`;
}

/** An account event to record: its account, that account's mode, its type and its data. */
export interface AccountEventInput<T extends AccountEventType = AccountEventType> {
  accountId: string;
  mode: 'live' | 'sandbox';
  type: T;
  data: AccountEventData<T>;
  /** When the event happened; the caller's clock (`ctx.clock.now()`). Default: now. */
  at?: Date;
  /**
   * A name making the event at most once: a second event with the same `once` is not recorded
   * (nor delivered) and the call answers null. E.g. `key.expiring:<keyId>:7`.
   */
  once?: string;
}

/** An event of any type without a once-key, its data of that type: what `recordAccountEvents` takes. */
export type ManyEventsInput = {
  [T in AccountEventType]: Omit<AccountEventInput<T>, 'once'>;
}[AccountEventType];

/** What was recorded: the event id and how many deliveries it made. */
export interface RecordedEvent {
  id: string;
  deliveries: number;
}

/**
 * Records an account event in the caller's transaction (`q`: a route's or a worker's transaction,
 * `queryable(ctx)` inside `withTransaction`), and writes one outbox delivery per enabled endpoint
 * of the account subscribed to its type — one statement, which commits or rolls back with the
 * caller's own rows (docs/webhooks.md#account-events). The payload is `{ id, type, createdAt, mode,
 * data }`; each delivery's `webhook-id` is the event id and the endpoint's. Answers null when
 * `once` was already used.
 */
export async function recordAccountEvent<T extends AccountEventType>(
  q: Queryable,
  input: AccountEventInput<T>,
): Promise<RecordedEvent | null> {
  const id = newEventId();
  const at = input.at ?? new Date();
  const data = JSON.stringify(input.data);
  const [row] = await q.query<{ id: string; deliveries: number }>(RECORD_EVENT, [
    id,
    input.accountId,
    input.mode,
    input.type,
    data,
    at,
    eventPayload(id, input.type, at, input.mode, data),
    MAX_ATTEMPTS,
    input.once ?? null,
  ]);
  return row ? { id: row.id, deliveries: row.deliveries } : null;
}

/**
 * Records many account events (without `once`) in the caller's transaction, each as
 * `recordAccountEvent` would, in one statement however many: a batch of finished jobs tells its
 * `job.completed` events in one round trip. Answers how many events and deliveries it wrote.
 */
export async function recordAccountEvents(
  q: Queryable,
  inputs: readonly ManyEventsInput[],
): Promise<{ events: number; deliveries: number }> {
  if (inputs.length === 0) return { events: 0, deliveries: 0 };
  const now = new Date();
  const rows = inputs.map((input) => {
    const id = newEventId();
    const at = input.at ?? now;
    const payload = eventPayload(id, input.type, at, input.mode, JSON.stringify(input.data));
    return { id, account_id: input.accountId, mode: input.mode, type: input.type, created_at: at, payload };
  });
  const [row] = await q.query<{ events: number; deliveries: number }>(RECORD_EVENTS, [
    JSON.stringify(rows),
    MAX_ATTEMPTS,
  ]);
  return { events: row?.events ?? 0, deliveries: row?.deliveries ?? 0 };
}

/** The body of every delivery of an event: `{ id, type, createdAt, mode, data }`, in that order. */
function eventPayload(id: string, type: string, at: Date, mode: string, data: string): string {
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"createdAt":"${at.toISOString()}","mode":${JSON.stringify(mode)},"data":${data}}`;
}
