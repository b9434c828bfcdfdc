/**
 * Strict ISO 8601 timestamps: a full date, a time to at least minutes, and an explicit zone
 * (`Z` or `±hh:mm`). `Date.parse` alone accepts far too much ("2026", "March 3") and silently rolls
 * impossible dates over, so the fields are checked after parsing.
 */
const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * The instants a timestamp may name: years 0001–9999 in UTC, what PostgreSQL's `timestamptz` takes
 * as ISO text and `toISOString` writes with four digits. `0000-06-01T00:00:00Z`, or
 * `9999-12-31T23:00:00-05:00` (the year 10000 in UTC), had reached the database and failed there:
 * a 500 (docs/api.md#errors).
 */
export const FIRST_INSTANT_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
export const LAST_INSTANT_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

export function parseIsoTimestamp(text: string): Date | null {
  const match = ISO_PATTERN.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s ?? '0');
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return null;
  const parsed = new Date(text);
  const ms = parsed.getTime();
  return ms >= FIRST_INSTANT_MS && ms <= LAST_INSTANT_MS ? parsed : null; // NaN is neither
}

const DAY_MS = 86_400_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/**
 * `new Date(ms).toISOString()` for 1970–9999, by arithmetic (days to a civil date, H. Hinnant's
 * algorithm): a few times cheaper, for answers that print a timestamp per bucket (a history prints
 * up to 1,000). Outside those years, toISOString itself.
 */
export function isoUtc(ms: number): string {
  if (!(ms >= 0 && ms < 253_402_300_800_000) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  const msText = millis < 10 ? `00${millis}` : millis < 100 ? `0${millis}` : String(millis);
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${msText}Z`;
}
