import { describe, expect, it } from 'vitest';
import { isoUtc, parseIsoTimestamp } from '../../src/lib/time.js';

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-11-21T12:00:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00:00.123Z', '2026-11-21T12:00:00.123Z'],
    ['2026-11-21T14:00:00+02:00', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T07:00:00-0500', '2026-11-21T12:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T01:00:00+01:00', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999Z'],
  ])('accepts %s', (text, iso) => {
    expect(parseIsoTimestamp(text)?.toISOString()).toBe(iso);
  });

  it.each([
    '2026-11-21',
    '2026-11-21T12:00:00',
    '2026-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T12:60:00Z',
    'tomorrow',
    '1795300000',
    '2026-11-21 12:00:00Z',
    '',
    // Outside the years 0001–9999 in UTC, which PostgreSQL would refuse.
    '0000-06-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:00:00-05:00',
  ])('refuses %j', (text) => {
    expect(parseIsoTimestamp(text)).toBeNull();
  });
});

describe('isoUtc', () => {
  it('writes what toISOString writes: every day boundary 1970–2100, leap days, and random instants', () => {
    const day = 86_400_000;
    const wrong: string[] = [];
    const check = (ms: number) => {
      if (isoUtc(ms) !== new Date(ms).toISOString()) wrong.push(`${ms}: ${isoUtc(ms)}`);
    };
    for (let ms = 0; ms < Date.UTC(2100, 0, 1); ms += day) {
      check(ms);
      check(ms + day - 1);
    }
    let seed = 7;
    for (let i = 0; i < 200_000; i++) {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      check(Math.floor((seed / 2 ** 32) * 253_402_300_799_999));
    }
    for (const ms of [Date.UTC(2000, 1, 29), Date.UTC(2100, 1, 28, 23, 59, 59, 999), 253_402_300_799_999])
      check(ms);
    expect(wrong).toEqual([]);
  });

  it('falls back to toISOString outside 1970–9999 and for fractions', () => {
    for (const ms of [-1, -86_400_000 * 400, 253_402_300_800_000, 1.5])
      expect(isoUtc(ms)).toBe(new Date(ms).toISOString());
  });
});
