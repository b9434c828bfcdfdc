/**
 * The one way work wakes its workers: `pg_notify(channel, '')` in the statement that writes the
 * work, so the notification is delivered when that transaction commits (a worker never looks for a
 * row that is not there yet) and costs no round trip of its own. `WorkQueue` listens on the channel.
 * The same statement may also tell listeners which row changed (an event stream per account), with
 * a column of the row as the payload.
 */

/** A channel to notify: its workers (no payload), or its listeners with a column of the row (`account_id`). */
export type Wake = string | { channel: string; payload: string };

/** The expression that sends one notification, `payload` being a SQL expression (a column) or none. */
export function notifyExpression(channel: string, payload?: string): string {
  return `pg_notify('${channel}', ${payload ?? "''"})`;
}

/**
 * `write` (an INSERT or UPDATE without RETURNING) made to answer `returning` of each row it wrote,
 * and to notify each channel of `wakes` once per row (PostgreSQL folds identical notifications of
 * one transaction into one: a channel without payload is woken once per transaction, one with a
 * payload once per distinct value).
 */
export function wakingWrite(wakes: Wake | readonly Wake[], write: string, returning: string): string {
  const list = (Array.isArray(wakes) ? wakes : [wakes]) as readonly Wake[];
  const columns = returning.split(',').map((column) => column.trim());
  const payloads = list.flatMap((wake) =>
    typeof wake === 'string' || columns.includes(wake.payload) ? [] : [wake.payload],
  );
  const notifications = list.map((wake, i) => {
    const expression =
      typeof wake === 'string' ? notifyExpression(wake) : notifyExpression(wake.channel, wake.payload);
    return `${expression} AS ${i === 0 ? 'woke' : `woke_${i + 1}`}`;
  });
  return `WITH written AS (
     ${write.trim()}
     RETURNING ${[...columns, ...payloads].join(', ')}
   )
   SELECT ${returning}, ${notifications.join(', ')} FROM written`;
}

/**
 * For a transaction of many statements (an ingestion chunk) where no single one writes "the work":
 * its last statement wakes the channel's workers.
 */
export function wakeUp(channel: string): string {
  return `SELECT ${notifyExpression(channel)}`;
}
