import type { Queryable } from '../db/database.js';
import { randomBase58 } from '../lib/ids.js';
import type { AccountEventData, AccountEventType } from './event-types.js';
import { RECORD_EVENTS } from './events-sql.js';
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
  /**
   * What the event's row keeps as its `data`, when the rest is kept by the row it reports: a
   * `job.completed` keeps its job's id, type and request id, its result staying in the job
   * (docs/webhooks.md#account-events). Default: `data`. Deliveries always carry `data` whole.
   */
  kept?: Record<string, unknown>;
}

/** An event of any type, its data of that type: what `recordAccountEvents` takes. */
export type ManyEventsInput = {
  [T in AccountEventType]: AccountEventInput<T>;
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
  const [recorded] = await recordAccountEvents(q, [input]);
  return recorded ?? null;
}

/**
 * Records many account events in the caller's transaction, in one statement — each as
 * `recordAccountEvent` records it, with its deliveries: a watcher chunk's `deposit.credited`, a
 * finishing batch's `job.completed`. Answers the events recorded (one whose `once` was already used
 * is not among them), in no particular order.
 */
export async function recordAccountEvents(
  q: Queryable,
  inputs: readonly AccountEventInput[],
): Promise<RecordedEvent[]> {
  if (inputs.length === 0) return [];
  const events = inputs.map(prepared);
  const column = <V>(f: (input: AccountEventInput) => V) => inputs.map(f);
  const rows = await q.query<{ id: string; deliveries: number }>(RECORD_EVENTS, [
    events.map((e) => e.id),
    column((input) => input.accountId),
    column((input) => input.mode),
    column((input) => input.type),
    events.map((e) => e.data),
    events.map((e) => e.at),
    events.map((e) => e.payload),
    MAX_ATTEMPTS,
    column((input) => input.once ?? null),
  ]);
  return rows.map((row) => ({ id: row.id, deliveries: row.deliveries }));
}

/**
 * An event's id, time, the data its row keeps (`kept`, else `data`) and the body of every delivery
 * of it: `{ id, type, createdAt, mode, data }`, in that order.
 */
function prepared(input: AccountEventInput) {
  const id = newEventId();
  const at = input.at ?? new Date();
  const whole = JSON.stringify(input.data);
  const payload = `{"id":${JSON.stringify(id)},"type":${JSON.stringify(input.type)},"createdAt":"${at.toISOString()}","mode":${JSON.stringify(input.mode)},"data":${whole}}`;
  return { id, at, data: input.kept ? JSON.stringify(input.kept) : whole, payload };
}
