import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/lib/client-ip.js';
import { type Cidr, cidrContains, formatIp, parseCidr, parseIp } from '../../src/lib/ip.js';

function cidrs(...entries: string[]): Cidr[] {
  return entries.map((e) => {
    const parsed = parseCidr(e);
    if ('error' in parsed) throw new Error(`${e}: ${parsed.error}`);
    return parsed.cidr;
  });
}

/** Would a key allowing `allow` accept a request from `peer` with `xff`, behind `trusted` proxies? */
function admitted(allow: string[], peer: string, xff: string | undefined, trusted: string[] = []): boolean {
  const client = clientAddress(peer, xff, cidrs(...trusted));
  return client !== null && cidrs(...allow).some((c) => cidrContains(c, client));
}

describe('allow-list matching of the client address (≥ 40 cases)', () => {
  const cases: [string, string[], string, string | undefined, string[], boolean][] = [
    // name, allow list, socket peer, X-Forwarded-For, trusted proxies, admitted?
    ['exact v4', ['203.0.113.7'], '203.0.113.7', undefined, [], true],
    ['other v4', ['203.0.113.7'], '203.0.113.8', undefined, [], false],
    ['v4 /24 first', ['198.51.100.0/24'], '198.51.100.0', undefined, [], true],
    ['v4 /24 last', ['198.51.100.0/24'], '198.51.100.255', undefined, [], true],
    ['v4 /24 one past', ['198.51.100.0/24'], '198.51.101.0', undefined, [], false],
    ['v4 /24 one before', ['198.51.100.0/24'], '198.51.99.255', undefined, [], false],
    ['v4 /32', ['10.1.2.3/32'], '10.1.2.3', undefined, [], true],
    ['v4 /0 admits all v4', ['0.0.0.0/0'], '8.8.8.8', undefined, [], true],
    ['v4 /0 does not admit v6', ['0.0.0.0/0'], '2001:db8::1', undefined, [], false],
    ['v4 /31 pair low', ['192.0.2.4/31'], '192.0.2.4', undefined, [], true],
    ['v4 /31 pair high', ['192.0.2.4/31'], '192.0.2.5', undefined, [], true],
    ['v4 /31 outside', ['192.0.2.4/31'], '192.0.2.6', undefined, [], false],
    ['v4 /8 boundary', ['10.0.0.0/8'], '10.255.255.255', undefined, [], true],
    ['v4 /8 beyond', ['10.0.0.0/8'], '11.0.0.0', undefined, [], false],
    ['mapped peer vs v4 range', ['10.0.0.0/8'], '::ffff:10.0.0.1', undefined, [], true],
    ['mapped peer outside v4 range', ['10.0.0.0/8'], '::ffff:11.0.0.1', undefined, [], false],
    ['mapped range vs v4 peer', ['::ffff:10.0.0.0/104'], '10.9.9.9', undefined, [], true],
    ['mapped hex peer', ['127.0.0.1'], '::ffff:7f00:1', undefined, [], true],
    ['exact v6', ['2001:db8::1'], '2001:db8::1', undefined, [], true],
    ['v6 long form', ['2001:db8::1'], '2001:0db8:0000:0000:0000:0000:0000:0001', undefined, [], true],
    ['v6 /32 inside', ['2001:db8::/32'], '2001:db8:ffff:ffff::1', undefined, [], true],
    ['v6 /32 outside', ['2001:db8::/32'], '2001:db9::1', undefined, [], false],
    ['v6 /64 last', ['2001:db8:1:2::/64'], '2001:db8:1:2:ffff:ffff:ffff:ffff', undefined, [], true],
    ['v6 /64 next', ['2001:db8:1:2::/64'], '2001:db8:1:3::', undefined, [], false],
    ['v6 loopback not v4 loopback', ['127.0.0.1'], '::1', undefined, [], false],
    ['v6 peer with zone', ['fe80::/10'], 'fe80::1%eth0', undefined, [], true],
    [
      'several entries, second matches',
      ['192.0.2.1', '2001:db8::/48'],
      '2001:db8:0:1::9',
      undefined,
      [],
      true,
    ],
    ['unparsable peer', ['0.0.0.0/0'], 'not-an-ip', undefined, [], false],
    // Forwarding headers without trusted proxies are ignored entirely.
    ['forged XFF, no proxies: peer used', ['203.0.113.7'], '192.0.2.50', '203.0.113.7', [], false],
    ['forged XFF, no proxies: peer allowed', ['192.0.2.50'], '192.0.2.50', '203.0.113.7', [], true],
    // Behind a trusted proxy: the right-most untrusted hop is the client.
    ['trusted proxy, client in XFF', ['203.0.113.7'], '10.0.0.2', '203.0.113.7', ['10.0.0.0/8'], true],
    ['trusted proxy, wrong client', ['203.0.113.7'], '10.0.0.2', '203.0.113.9', ['10.0.0.0/8'], false],
    [
      'forged left-most hop ignored',
      ['203.0.113.7'],
      '10.0.0.2',
      '203.0.113.7, 198.51.100.1',
      ['10.0.0.0/8'],
      false,
    ],
    [
      'real client right of forged one',
      ['198.51.100.1'],
      '10.0.0.2',
      '203.0.113.7, 198.51.100.1',
      ['10.0.0.0/8'],
      true,
    ],
    [
      'two trusted hops skipped',
      ['198.51.100.1'],
      '10.0.0.2',
      '198.51.100.1, 10.0.0.9',
      ['10.0.0.0/8'],
      true,
    ],
    ['untrusted peer: XFF ignored', ['203.0.113.7'], '192.0.2.1', '203.0.113.7', ['10.0.0.0/8'], false],
    [
      'malformed hop left of the client is never read',
      ['0.0.0.0/0'],
      '10.0.0.2',
      'garbage, 198.51.100.1',
      ['10.0.0.0/8'],
      true,
    ],
    ['malformed right-most hop', ['0.0.0.0/0'], '10.0.0.2', '198.51.100.1, garbage', ['10.0.0.0/8'], false],
    [
      'all hops trusted: left-most used',
      ['10.0.0.7'],
      '10.0.0.2',
      '10.0.0.7, 10.0.0.8',
      ['10.0.0.0/8'],
      true,
    ],
    ['mapped hop in XFF', ['198.51.100.1'], '10.0.0.2', '::ffff:198.51.100.1', ['10.0.0.0/8'], true],
    ['v6 client behind v4 proxy', ['2001:db8::/32'], '10.0.0.2', '2001:db8::5', ['10.0.0.0/8'], true],
    ['mapped proxy peer trusted', ['198.51.100.1'], '::ffff:10.0.0.2', '198.51.100.1', ['10.0.0.0/8'], true],
    ['empty XFF behind proxy: the proxy', ['10.0.0.2'], '10.0.0.2', '', ['10.0.0.0/8'], true],
    ['octal-looking hop refused', ['0.0.0.0/0'], '10.0.0.2', '017.0.0.1', ['10.0.0.0/8'], false],
  ];

  it.each(cases)('%s', (_name, allow, peer, xff, trusted, expected) => {
    expect(admitted(allow, peer, xff, trusted)).toBe(expected);
  });

  it('reads the header as Node gives it when repeated', () => {
    const client = clientAddress('10.0.0.2', ['203.0.113.7', '198.51.100.1'], cidrs('10.0.0.0/8'));
    expect(client && formatIp(client)).toBe('198.51.100.1');
  });

  it('has at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(parseIp('::ffff:10.0.0.1')).toEqual(parseIp('10.0.0.1'));
  });
});
