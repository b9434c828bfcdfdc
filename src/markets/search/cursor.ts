import { createHash } from 'node:crypto';
import { validationError } from '../../errors.js';

/**
 * Keyset cursors (docs/markets.md#cursors): the position after the last item of a page — its sort
 * key and id — and a check that ties the cursor to the query that made it. The check is a digest of
 * the position and the query's fingerprint, so an edited cursor, or one handed to another query
 * (other filters, sort or order; another market's trades), is refused with VALIDATION_ERROR rather
 * than read as some other position. A cursor is a position, not a secret: it grants nothing.
 */

export interface Position {
  /** The sort key of the last item, as text (a timestamp, an integer, a number). */
  key: string;
  id: string;
}

const CHECK_BYTES = 12;
/** Longest cursor accepted; a real one is well under half of it. */
export const MAX_CURSOR_LENGTH = 512;
/**
 * Marks a parameter whose valid values only the service makes (a cursor): no schema can tell one
 * from a forged string of the same form, so the document says so and generated requests leave it out.
 */
export const OPAQUE = 'x-opaque';
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';

function check(payload: string, fingerprint: string): string {
  return createHash('sha256')
    .update(payload)
    .update('\u0000')
    .update(fingerprint)
    .digest()
    .subarray(0, CHECK_BYTES)
    .toString('base64url');
}

/** The fingerprint of a query: every parameter that decides which items come in which order. */
export function fingerprint(parts: readonly (string | number | undefined | null)[]): string {
  return JSON.stringify(parts.map((p) => (p === undefined ? null : p)));
}

export function encodeCursor(position: Position, queryFingerprint: string): string {
  const payload = Buffer.from(JSON.stringify([position.key, position.id])).toString('base64url');
  return `${payload}.${check(payload, queryFingerprint)}`;
}

/**
 * The position a cursor names, for the query whose fingerprint is given. `isKey` checks the key's
 * form for the query's sort (a timestamp, an integer…), so a key never reaches SQL unchecked.
 */
export function decodeCursor(
  cursor: string,
  queryFingerprint: string,
  isKey: (key: string) => boolean,
): Position {
  const refuse = (message: string) => validationError([{ path: 'query.cursor', message }]);
  const [payload, digest, ...rest] = cursor.split('.');
  if (payload === undefined || digest === undefined || rest.length > 0) throw refuse('is not a cursor');
  if (digest !== check(payload, queryFingerprint)) {
    throw refuse(
      'was altered, or belongs to another query (a cursor continues the query that returned it: same filters, sort and order)',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refuse('is not a cursor');
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string' ||
    !isKey(parsed[0])
  ) {
    throw refuse('is not a cursor');
  }
  return { key: parsed[0], id: parsed[1] };
}
