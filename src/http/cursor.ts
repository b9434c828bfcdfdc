import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import Type from 'typebox';
import type { Queryable } from '../db/database.js';
import { instanceSetting } from '../db/instance-settings.js';
import { validationError } from '../errors.js';
import { parseIsoTimestamp } from '../lib/time.js';

/**
 * Keyset cursors, the one kind every cursor-paged list hands out (the markets, a market's trades,
 * an endpoint's webhook deliveries; docs/markets.md#cursors): the position after the last item of a
 * page — its sort key and id — and a check that ties the cursor to the query that made it. The check
 * is an HMAC of the position and the query's fingerprint under the installation's cursor key, so only
 * the service can make a cursor: an edited or forged one, or one handed to another query (other
 * filters, sort or order; another market's trades, another endpoint's deliveries), is refused with
 * VALIDATION_ERROR rather than read as some other position. A cursor is a position, not a secret: it
 * grants nothing. Its key and id are range-checked all the same, so that even a cursor made with the
 * key reaches SQL only with values the statement's casts accept.
 */

export interface Position {
  /** The sort key of the last item, as text (a timestamp, an integer, a number). */
  key: string;
  id: string;
}

/** Makes and reads the cursors of one installation (all its processes share the key). */
export interface CursorCodec {
  encode(position: Position, queryFingerprint: string): string;
  /**
   * The position a cursor names, for the query whose fingerprint is given. `isKey` checks the key's
   * form and range for the query's sort (a timestamp, an integer…), so a key never reaches SQL unchecked.
   */
  decode(cursor: string, queryFingerprint: string, isKey: (key: string) => boolean): Position;
}

const CHECK_BYTES = 16;
/** Longest cursor accepted; a real one is well under half of it. */
export const MAX_CURSOR_LENGTH = 512;
/**
 * Marks a parameter whose valid values only the service makes (a cursor): no schema can tell one
 * from a forged string of the same form, so the document says so and generated requests leave it out.
 */
export const OPAQUE = 'x-opaque';
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';

/** The optional `cursor` query parameter of a cursor-paged list, `description` saying whose cursor it takes. */
export function cursorParameter(description: string) {
  return Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      pattern: CURSOR_PATTERN,
      [OPAQUE]: true,
      description,
    }),
  );
}

/** The installation's cursor key, in instance_settings: made by the first start, kept by every later one. */
const KEY_SETTING = 'cursor_key';
const KEY_BYTES = 32;

/** The cursor codec of the database's installation: its key made on first use, shared by every process. */
export async function loadCursorCodec(db: Queryable, now: Date): Promise<CursorCodec> {
  const stored = await instanceSetting(db, KEY_SETTING, () => randomBytes(KEY_BYTES).toString('base64'), now);
  return cursorCodec(Buffer.from(stored, 'base64'));
}

/** Cursors signed with `key` (HMAC-SHA-256, the first 16 bytes). */
export function cursorCodec(key: Buffer): CursorCodec {
  const check = (payload: string, fingerprint: string): Buffer =>
    createHmac('sha256', key)
      .update(payload)
      .update('\u0000')
      .update(fingerprint)
      .digest()
      .subarray(0, CHECK_BYTES);
  return {
    encode(position, queryFingerprint) {
      const payload = Buffer.from(JSON.stringify([position.key, position.id])).toString('base64url');
      return `${payload}.${check(payload, queryFingerprint).toString('base64url')}`;
    },
    decode(cursor, queryFingerprint, isKey) {
      const refuse = (message: string) => validationError([{ path: 'query.cursor', message }]);
      const [payload, digest, ...rest] = cursor.split('.');
      if (payload === undefined || digest === undefined || rest.length > 0) throw refuse('is not a cursor');
      const given = Buffer.from(digest, 'base64url');
      if (given.length !== CHECK_BYTES || !timingSafeEqual(given, check(payload, queryFingerprint))) {
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
        !ITEM_ID.test(parsed[1]) ||
        !isKey(parsed[0])
      ) {
        throw refuse('is not a cursor');
      }
      return { key: parsed[0], id: parsed[1] };
    },
  };
}

/** The fingerprint of a query: every parameter that decides which items come in which order. */
export function fingerprint(parts: readonly (string | number | undefined | null)[]): string {
  return JSON.stringify(parts.map((p) => (p === undefined ? null : p)));
}

/** An item's id (a market's or a trade's, as ingestion admits them; a delivery's): printable ASCII, at most 200 characters. */
const ITEM_ID = /^[!-~]{1,200}$/;
const TIMESTAMP_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * A timestamp key as the statements write it (UTC, to the microsecond) that names a real instant of
 * the years 0001–9999: `timestamptz` refuses 0000-01-01 or February 30 with an error, not a false.
 */
export function isTimestampKey(key: string): boolean {
  return TIMESTAMP_KEY.test(key) && parseIsoTimestamp(key) !== null;
}
