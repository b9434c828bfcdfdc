import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { isPublicAddress } from '../../src/webhooks/addresses.js';
import { validateHttpsCallbackUrl } from '../../src/webhooks/port.js';
import { createGuardedTransport, type Resolver } from '../../src/webhooks/transport.js';

/**
 * The SSRF corpus: callback URLs that try to reach the service's own network. Canary TCP listeners
 * on loopback count every connection; across the whole corpus none may arrive. URLs are refused at
 * submit time (scheme, userinfo, length) or at connect time (the address actually connected to).
 */

const canaries: Server[] = [];
let connections = 0;
let port4 = 0;
let port6 = 0;

async function canary(host: string): Promise<number> {
  const server = createServer((socket) => socket.destroy());
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  canaries.push(server);
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  port4 = await canary('127.0.0.1');
  port6 = await canary('::1').catch(() => port4);
});
afterAll(async () => {
  await Promise.all(canaries.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

/** A resolver that answers from a table (and counts its calls); unknown names do not exist. */
function tableResolver(table: Record<string, string[] | (() => string[])>): Resolver & { calls: number } {
  const resolver = Object.assign(
    async (hostname: string): Promise<LookupAddress[]> => {
      resolver.calls += 1;
      const entry = table[hostname.toLowerCase()];
      const answers = typeof entry === 'function' ? entry() : entry;
      if (!answers)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    { calls: 0 },
  );
  return resolver;
}

// IPv4 literals in every spelling the URL parser accepts, and the private ranges.
const V4 = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '2130706433',
  '0x7f000001',
  '0x7f.1',
  '0x7f.0.0.1',
  '017700000001',
  '0177.0.0.1',
  '0177.0.0.01',
  '127.000.000.001',
  '127.255.255.254',
  '0',
  '0.0.0.0',
  '0x0',
  '00',
  '10.0.0.1',
  '10.255.255.255',
  '012.0.0.1',
  '0xa.0.0.1',
  '167772161',
  '172.16.0.1',
  '172.31.255.255',
  '0xac100001',
  '192.168.0.1',
  '192.168.255.255',
  '3232235521',
  '0300.0250.0.1',
  '169.254.169.254',
  '0xa9fea9fe',
  '2852039166',
  '169.254.0.1',
  '100.64.0.1',
  '100.127.255.254',
  '224.0.0.1',
  '239.255.255.250',
  '255.255.255.255',
  '198.18.0.1',
  '198.19.255.1',
  '192.0.2.1',
  '198.51.100.1',
  '203.0.113.1',
  '240.0.0.1',
  '192.0.0.1',
  '0.1.2.3',
];
// IPv6 literals: loopback, unspecified, private, link-local, and forms embedding a private IPv4.
const V6 = [
  '::1',
  '0:0:0:0:0:0:0:1',
  '0000::0001',
  '::',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:192.168.1.1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::a00:1',
  '2002:7f00:1::',
  '2002:a00:1::1',
  '2002:a9fe:a9fe::',
  '::127.0.0.1',
  '::7f00:1',
  '::10.0.0.1',
  'fe80::1',
  'fe80::abcd:1234',
  'fc00::1',
  'fd00::1',
  'fd00:ec2::254',
  'ff02::1',
  'ff05::2',
  '2001:db8::1',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '100::1',
  'fec0::1',
];
// Host names that resolve to private addresses (through the injected resolver), and DNS tricks.
const NAMES: Record<string, string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'localhost.': ['127.0.0.1'],
  LOCALHOST: ['127.0.0.1'],
  'api.localhost': ['127.0.0.1'],
  'metadata.google.internal': ['169.254.169.254'],
  'instance-data.ec2.internal': ['169.254.169.254'],
  'internal.example.com': ['10.0.0.5'],
  'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  'mixed6.example.com': ['2606:2800:220:1:248:1893:25c8:1946', '::1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'nat64.example.com': ['64:ff9b::7f00:1'],
  '7f000001.nip.example': ['127.0.0.1'],
  'cgnat.example.com': ['100.64.1.1'],
  'linklocal6.example.com': ['fe80::1'],
  'zero.example.com': ['0.0.0.0'],
  'ula.example.com': ['fd12:3456::1'],
  'ipv4compat.example.com': ['::7f00:1'],
  'ipv4compat-public.example.com': ['::8.8.8.8'],
  'sixtofour.example.com': ['2002:c0a8:101::1'],
  'multicast.example.com': ['224.0.0.251'],
  'broadcast.example.com': ['255.255.255.255'],
};

describe('SSRF corpus: 0 connections reach the canaries', () => {
  const transport = () =>
    createGuardedTransport({
      allowPrivateTargets: false,
      timeoutMs: 1500,
      maxResponseBytes: 65_536,
      resolver: tableResolver(NAMES),
    });

  it(`refuses ${V4.length} IPv4 spellings, ${V6.length} IPv6 forms and ${Object.keys(NAMES).length} resolving names`, async () => {
    const t = transport();
    const urls = [
      ...V4.map((h) => `https://${h}:${port4}/hook`),
      ...V6.map((h) => `https://[${h}]:${port6}/hook`),
      ...Object.keys(NAMES).map((h) => `https://${h}:${port4}/hook`),
      // userinfo and port tricks that still parse to a private host
      `https://hooks.example.com@127.0.0.1:${port4}/`,
      `https://127.0.0.1:${port4}#@hooks.example.com/`,
      `https://127.0.0.1:${port4}\\@hooks.example.com/`,
      `https://[::1]:${port6}/`,
      `https://127.0.0.1%2e:${port4}/`,
      `https://%31%32%37.0.0.1:${port4}/`,
      `https://127.0.0.1.:${port4}/`,
      `https://LocalHost:${port4}/`,
    ];
    expect(urls.length).toBeGreaterThanOrEqual(100);
    const outcomes = await Promise.all(urls.map((url) => t.send({ url, body: '{}', headers: {} })));
    const reached = outcomes.map((o, i) => ({ url: urls[i], o })).filter(({ o }) => o.kind !== 'error');
    expect(reached).toEqual([]);
    for (const outcome of outcomes) {
      expect(
        outcome.kind === 'error' && ['blocked_address', 'dns', 'connection'].includes(outcome.code),
      ).toBe(true);
    }
    expect(connections).toBe(0);
    await t.close();
  });

  it('a DNS answer that flips between public and private (rebinding) never connects to the private one', async () => {
    let calls = 0;
    // The first answer is public, every later one is loopback: whatever was checked is what is connected to.
    const flip = tableResolver({
      'rebind.example.com': () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']),
    });
    const t = createGuardedTransport({
      allowPrivateTargets: false,
      timeoutMs: 500,
      maxResponseBytes: 65_536,
      resolver: flip,
    });
    for (let i = 0; i < 5; i++) {
      const outcome = await t.send({ url: `https://rebind.example.com:${port4}/`, body: '{}', headers: {} });
      expect(outcome.kind).toBe('error');
    }
    // And the other way round: private first.
    let calls2 = 0;
    const flop = tableResolver({
      'rebind2.example.com': () => (++calls2 % 2 === 1 ? ['127.0.0.1'] : ['8.8.4.4']),
    });
    const t2 = createGuardedTransport({
      allowPrivateTargets: false,
      timeoutMs: 500,
      maxResponseBytes: 65_536,
      resolver: flop,
    });
    for (let i = 0; i < 4; i++) {
      await t2.send({ url: `https://rebind2.example.com:${port4}/`, body: '{}', headers: {} });
    }
    expect(connections).toBe(0);
    await Promise.all([t.close(), t2.close()]);
  });

  it('submit-time rules: https only, no userinfo, at most 2,048 characters, a host', () => {
    const refused = [
      `http://127.0.0.1:${port4}/`,
      'http://hooks.example.com/',
      'ftp://hooks.example.com/',
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
      'javascript:alert(1)',
      'data:text/plain,hi',
      'https://user:pass@hooks.example.com/',
      'https://user@hooks.example.com/',
      'https://:pass@hooks.example.com/',
      `https://hooks.example.com/${'a'.repeat(2048)}`,
      'https://',
      'not a url',
      '//hooks.example.com/',
      'HTTPS//hooks.example.com',
    ];
    for (const url of refused) {
      expect(() => validateHttpsCallbackUrl(url, 'body.callbackUrl'), url).toThrow(AppError);
    }
    expect(() =>
      validateHttpsCallbackUrl('https://hooks.example.com/sibyl', 'body.callbackUrl'),
    ).not.toThrow();
  });
});

describe('address classification', () => {
  it('public unicast addresses are allowed, in both families and in embedded forms', () => {
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });
  it('every special range is refused', () => {
    for (const address of [...V4.filter((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)), ...V6, 'not-an-ip', '']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
  it('an IPv4-compatible address (::a.b.c.d) is refused whatever it embeds, however it is written', () => {
    // ipaddr.js reads ::8.8.8.8 as the mapped ::ffff:8.8.8.8; the bytes say otherwise.
    for (const address of ['::8.8.8.8', '::808:808', '0:0:0:0:0:0:8.8.8.8', '::1.1.1.1', '::93.184.216.34']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
  });
});
