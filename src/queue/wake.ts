/**
 * The one way work wakes its workers: `pg_notify(channel, '')` in the statement that writes the
 * work, so the notification is delivered when that transaction commits (a worker never looks for a
 * row that is not there yet) and costs no round trip of its own. `WorkQueue` listens on the channel.
 */

/**
 * `write` (an INSERT or UPDATE without RETURNING) made to answer `returning` of each row it wrote,
 * and to wake the channel's workers once per row (PostgreSQL folds identical notifications of one
 * transaction into one).
 */
export function wakingWrite(channel: string, write: string, returning: string): string {
  return `WITH written AS (
     ${write.trim()}
     RETURNING ${returning}
   )
   SELECT ${returning}, pg_notify('${channel}', '') AS woke FROM written`;
}

/**
 * For a transaction of many statements (an ingestion chunk) where no single one writes "the work":
 * its last statement wakes the channel's workers.
 */
export function wakeUp(channel: string): string {
  return `SELECT pg_notify('${channel}', '')`;
}
