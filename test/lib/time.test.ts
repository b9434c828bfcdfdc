import { describe, expect, it } from 'vitest';
import { parseIsoTimestamp } from '../../src/lib/time.js';

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-11-21T12:00:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00:00.123Z', '2026-11-21T12:00:00.123Z'],
    ['2026-11-21T14:00:00+02:00', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T07:00:00-0500', '2026-11-21T12:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
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
  ])('refuses %j', (text) => {
    expect(parseIsoTimestamp(text)).toBeNull();
  });
});
