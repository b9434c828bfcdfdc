import ipaddr from 'ipaddr.js';

/**
 * Whether a callback may connect to `address` (an IP literal, as DNS answered or as written in the
 * URL): only public unicast addresses may be reached. Loopback, private, link-local (and with it the
 * 169.254.169.254 metadata service), CGNAT, multicast, broadcast, unspecified, reserved and
 * documentation ranges are refused, and so are IPv6 forms that embed an IPv4 address (mapped,
 * translated, NAT64, 6to4) unless the embedded address is itself public. Ranges come from ipaddr.js.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(stripZone(address));
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded !== undefined) return embedded !== null && embedded.range() === 'unicast';
  return v6.range() === 'unicast';
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
