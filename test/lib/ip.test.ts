import { describe, expect, it } from 'vitest';
import { cidrContains, formatCidr, formatIp, parseCidr, parseIp } from '../../src/lib/ip.js';

function contains(range: string, address: string): boolean {
  const cidr = parseCidr(range);
  const ip = parseIp(address);
  if (!('cidr' in cidr) || !ip) throw new Error(`bad test input ${range} ${address}`);
  return cidrContains(cidr.cidr, ip);
}

describe('IP parsing', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['::1', '::1'],
    ['::', '::'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::FFFF:7f00:1', '127.0.0.1'],
    ['fe80::1:2:3:4', 'fe80::1:2:3:4'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['64:ff9b::192.0.2.1', '64:ff9b::c000:201'],
  ])('parses %s as %s', (text, canonical) => {
    const ip = parseIp(text);
    expect(ip).not.toBeNull();
    expect(formatIp(ip as NonNullable<typeof ip>)).toBe(canonical);
  });

  it.each([
    '127.1',
    '017.0.0.1',
    '0x7f.0.0.1',
    '2130706433',
    '256.0.0.1',
    '1.2.3',
    '1.2.3.4.5',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    ':::',
    'fe80::1%eth0',
    '::ffff:1.2.3',
    '1.2.3.4::',
    '',
    'localhost',
  ])('refuses %j', (text) => {
    expect(parseIp(text)).toBeNull();
  });
});

describe('CIDR ranges', () => {
  it('canonicalises and refuses host bits', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ cidr: { version: 4, base: 0x0a000000n, prefix: 8 } });
    expect(parseCidr('10.0.0.5/8')).toEqual({ error: 'has host bits set (did you mean 10.0.0.0/8?)' });
    expect(parseCidr('10.0.0.0/33')).toEqual({ error: 'has an invalid prefix length (0-32)' });
    expect(parseCidr('::ffff:10.0.0.0/104')).toEqual({ cidr: { version: 4, base: 0x0a000000n, prefix: 8 } });
    const single = parseCidr('2001:db8::1');
    expect('cidr' in single && formatCidr(single.cidr)).toBe('2001:db8::1');
  });

  it.each([
    ['10.0.0.0/8', '10.255.255.255', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['10.0.0.0/8', '::ffff:10.0.0.1', true],
    ['::ffff:10.0.0.0/104', '10.1.2.3', true],
    ['192.168.1.1', '192.168.1.1', true],
    ['192.168.1.1', '192.168.1.2', false],
    ['0.0.0.0/0', '8.8.8.8', true],
    ['0.0.0.0/0', '2001:db8::1', false],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/32', '2001:db9::1', false],
    ['::/0', '::1', true],
  ])('%s contains %s: %s', (range, address, expected) => {
    expect(contains(range, address)).toBe(expected);
  });
});
