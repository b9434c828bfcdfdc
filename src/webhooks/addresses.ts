import ipaddr from 'ipaddr.js';
import { ipBytes, parseIp } from '../lib/ip.js';

/**
 * Whether a callback may connect to `address` (an IP literal, as DNS answered or as written in the
 * URL): only public unicast addresses may be reached. Loopback, private, link-local (and with it the
 * 169.254.169.254 metadata service), CGNAT, multicast, broadcast, unspecified, reserved and
 * documentation ranges are refused, and so are IPv6 forms that embed an IPv4 address (mapped,
 * translated, NAT64, 6to4) unless the embedded address is itself public. Ranges come from ipaddr.js.
 *
 * The decision is made on the address's bytes, parsed strictly (src/lib/ip.ts), never on its text:
 * ipaddr.js reads the IPv4-compatible `::8.8.8.8` as if it were the mapped `::ffff:8.8.8.8`, which
 * let a refused form pass as a public one.
 */
export function isPublicAddress(address: string): boolean {
  const ip = parseIp(stripZone(address));
  if (!ip) return false;
  // parseIp gives the mapped ::ffff:a.b.c.d as the IPv4 address it maps, classified as such.
  if (ip.version === 4) return ipaddr.fromByteArray(ipBytes(ip)).range() === 'unicast';
  const v6 = ipaddr.fromByteArray(ipBytes(ip)) as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded !== undefined) return embedded !== null && embedded.range() === 'unicast';
  return v6.range() === 'unicast';
}

/**
 * Special-use domain names (RFC 6761 §6, RFC 6762) that no public resolver answers for: `.test`
 * (testing), `.example` (documentation), `.invalid` (never resolves, by definition), `.local`
 * (multicast DNS on the local link), and `.localhost` (this machine). A callback to one could only
 * ever reach a host the local machine's own configuration names.
 */
const SPECIAL_USE: Record<string, string> = {
  invalid: '.invalid, RFC 6761: it never resolves',
  test: '.test, RFC 6761: reserved for testing, never resolved publicly',
  example: '.example, RFC 6761: reserved for documentation, never resolved publicly',
  local: '.local, RFC 6762: multicast DNS on a local link, never resolved publicly',
};

function normalName(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** `localhost` and the names under it (RFC 6761 §6.3): this machine's loopback, whatever DNS says. */
export function isLocalhostName(hostname: string): boolean {
  const name = normalName(hostname);
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Why a callback host can never be delivered to, decided without DNS: an IP literal that is not
 * public (in any spelling the URL parser accepts: `0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]` all
 * reach here as their normal form), a `localhost` name (RFC 6761: `localhost`, `*.localhost`), or
 * another special-use name (`.test`, `.example`, `.invalid`, `.local`). With private targets
 * allowed (local development: a receiver on this machine or its network, named by /etc/hosts or
 * multicast DNS), only `.invalid` is refused, which resolves nowhere. Null for every other host:
 * what a DNS name resolves to is checked when connecting, on the address actually connected to.
 * `hostname` is a WHATWG URL's `hostname`.
 */
export function blockedHostReason(hostname: string, allowPrivate = false): string | null {
  const name = normalName(hostname);
  const tld = name.slice(name.lastIndexOf('.') + 1);
  if (tld === 'invalid') return `is a special-use name (${SPECIAL_USE.invalid})`;
  if (allowPrivate) return null;
  if (isLocalhostName(name)) return 'is a localhost name';
  const special = SPECIAL_USE[tld];
  if (special !== undefined) return `is a special-use name (${special})`;
  const literal = name.startsWith('[') ? name.slice(1, -1) : name;
  if (parseIp(literal) === null) return null;
  return isPublicAddress(literal) ? null : 'is not a public address';
}

/**
 * Whether a callback host is this machine's loopback: a `localhost` name (`localhost`,
 * `app.localhost`: RFC 6761 §6.3), or an IP literal in 127.0.0.0/8 or `::1` (in any spelling the
 * URL parser accepts; the mapped `[::ffff:127.0.0.1]` too). With private targets allowed, such a
 * host may be called over plain `http://` (docs/webhooks.md#local-development). `hostname` is a WHATWG
 * URL's `hostname`.
 */
export function isLoopbackHost(hostname: string): boolean {
  const name = normalName(hostname);
  if (isLocalhostName(name)) return true;
  const ip = parseIp(name.startsWith('[') ? name.slice(1, -1) : name);
  return ip !== null && ipaddr.fromByteArray(ipBytes(ip)).range() === 'loopback';
}

/**
 * The IPv4 address inside an IPv6 form that carries one: undefined for a plain IPv6 address, null
 * for a form that is refused whatever it embeds (IPv4-compatible `::a.b.c.d`, Teredo).
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null | undefined {
  const bytes = v6.toByteArray();
  const last4 = () => new ipaddr.IPv4(bytes.slice(12, 16));
  switch (v6.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // 64:ff9b::a.b.c.d (NAT64)
      return last4();
    case '6to4': // 2002:AABB:CCDD::/48
      return new ipaddr.IPv4(bytes.slice(2, 6));
    case 'teredo':
      return null;
    default:
      // ::/96 other than :: and ::1: the deprecated IPv4-compatible form, which some stacks route.
      if (bytes.slice(0, 12).every((b) => b === 0)) return null;
      return undefined;
  }
}

function stripZone(address: string): string {
  const at = address.indexOf('%');
  return at < 0 ? address : address.slice(0, at);
}
