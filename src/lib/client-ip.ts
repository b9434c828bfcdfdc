import { type Cidr, cidrContains, type IpAddress, parseIp } from './ip.js';

function isTrusted(ip: IpAddress, trusted: readonly Cidr[]): boolean {
  return trusted.some((cidr) => cidrContains(cidr, ip));
}

/**
 * The client's address. The socket peer, unless the peer is one of the operator's trusted
 * proxies: then `X-Forwarded-For` is read from the right, skipping trusted hops, and the first
 * untrusted hop is the client. Entries left of it are whatever the client chose to send and are
 * never believed. A malformed hop stops the walk: the result is null (no address), which no allow
 * list matches. With no trusted proxies configured, forwarding headers are ignored entirely.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: readonly Cidr[],
): IpAddress | null {
  if (!peer) return null;
  const peerIp = parseIp(peer.includes('%') ? (peer.split('%')[0] as string) : peer);
  if (!peerIp || trusted.length === 0 || !isTrusted(peerIp, trusted) || !forwardedFor) return peerIp;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0);
  let client: IpAddress = peerIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseIp(hops[i] as string);
    if (!hop) return null;
    client = hop;
    if (!isTrusted(hop, trusted)) return hop;
  }
  // Every hop was a trusted proxy: the left-most is as close to the client as we can see.
  return client;
}
