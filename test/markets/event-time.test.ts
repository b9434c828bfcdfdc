import { describe, expect, it } from 'vitest';
import { toMicros } from '../../src/markets/ingest/events.js';

/** An event's `at` (docs/markets.md#rules): microseconds since the epoch and the text stored. */
describe('toMicros', () => {
  it('reads toISOString’s form and any other zone alike, to the microsecond', () => {
    const expected = {
      micros: Date.UTC(2026, 2, 1, 10, 0, 0, 123) * 1000,
      iso: '2026-03-01T10:00:00.123000Z',
    };
    expect(toMicros('2026-03-01T10:00:00.123Z')).toEqual(expected);
    expect(toMicros('2026-03-01T12:00:00.123+02:00')).toEqual(expected);
    expect(toMicros('2026-03-01T10:00:00.123000Z')).toEqual(expected);
    expect(toMicros('2026-03-01T10:00:00.1234567Z')).toEqual({
      micros: expected.micros + 456,
      iso: '2026-03-01T10:00:00.123456Z',
    });
    expect(toMicros('2024-02-29T23:59:59.999Z')).toEqual({
      micros: Date.UTC(2024, 1, 29, 23, 59, 59, 999) * 1000,
      iso: '2024-02-29T23:59:59.999000Z',
    });
  });

  it('refuses a date or time that does not exist, in toISOString’s form as in any other', () => {
    for (const text of [
      '2026-02-30T00:00:00.000Z',
      '2023-02-29T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-01-00T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:60:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '2026-02-30T00:00:00Z',
      '2026-01-01T00:00:00.000',
      '0000-06-01T00:00:00.000Z',
      '0000-06-01T00:00:00Z',
      '0001-01-01T00:30:00.000+01:00',
      '9999-12-31T23:59:59.999999-05:00',
    ])
      expect(toMicros(text), text).toBeNull();
  });

  it('takes the first and last instants PostgreSQL stores', () => {
    expect(toMicros('0001-01-01T00:00:00.000Z')?.iso).toBe('0001-01-01T00:00:00.000000Z');
    expect(toMicros('9999-12-31T23:59:59.999999Z')?.iso).toBe('9999-12-31T23:59:59.999999Z');
  });

  it('keeps the fraction of an instant before 1970', () => {
    expect(toMicros('1969-12-31T23:59:59.500Z')).toEqual({
      micros: -500_000,
      iso: '1969-12-31T23:59:59.500000Z',
    });
    expect(toMicros('1969-12-31T23:59:59.25Z')).toEqual({
      micros: -750_000,
      iso: '1969-12-31T23:59:59.250000Z',
    });
  });
});
