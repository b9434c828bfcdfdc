/**
 * Strict IP and CIDR parsing for allow lists and client addresses. Addresses become integers, so
 * matching never compares strings (alternative spellings such as `127.1` or `::ffff:7f00:1` have
 * fooled string-based IP libraries): IPv4-mapped IPv6 (`::ffff:a.b.c.d`)
 * is normalised to IPv4, and the ambiguous legacy IPv4 forms (`127.1`, octal `017.0.0.1`, hex) are
 * refused rather than guessed at.
 */
export interface IpAddress {
  version: 4 | 6;
  value: bigint;
}

export interface Cidr {
  version: 4 | 6;
  base: bigint;
  prefix: number;
}

const V4_PART = /^(0|[1-9]\d{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!V4_PART.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseV6Words(half: string): bigint[] | null {
  if (half === '') return [];
  const groups = half.split(':');
  const words: bigint[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i] as string;
    if (group.includes('.')) {
      // An embedded IPv4 address may only end the address.
      const v4 = i === groups.length - 1 ? parseV4(group) : null;
      if (v4 === null) return null;
      words.push(v4 >> 16n, v4 & 0xffffn);
    } else if (HEX_GROUP.test(group)) {
      words.push(BigInt(`0x${group}`));
    } else {
      return null;
    }
  }
  return words;
}

function parseV6(text: string): bigint | null {
  if (text.length < 2 || text.length > 45) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseV6Words(halves[0] as string);
  if (!head) return null;
  let words: bigint[];
  if (halves.length === 1) {
    if (head.length !== 8) return null;
    words = head;
  } else {
    if ((halves[0] as string).includes('.')) return null;
    const tail = parseV6Words(halves[1] as string);
    // `::` stands for at least one zero word.
    if (!tail || head.length + tail.length > 7) return null;
    words = [...head, ...new Array<bigint>(8 - head.length - tail.length).fill(0n), ...tail];
  }
  return words.reduce((acc, w) => (acc << 16n) | w, 0n);
}

/** Parses an IPv4 or IPv6 address; mapped IPv6 comes back as IPv4. A zone (`%eth0`) is refused. */
export function parseIp(text: string): IpAddress | null {
  if (text.includes(':')) {
    const value = parseV6(text);
    if (value === null) return null;
    if (value >> 32n === 0xffffn) return { version: 4, value: value & 0xffffffffn };
    return { version: 6, value };
  }
  const v4 = parseV4(text);
  return v4 === null ? null : { version: 4, value: v4 };
}

/** Parses `addr` or `addr/prefix`; an error message when malformed or when host bits are set. */
export function parseCidr(text: string): { cidr: Cidr } | { error: string } {
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? null : text.slice(slash + 1);
  const isV6Text = addressText.includes(':');
  const raw = isV6Text ? parseV6(addressText) : parseV4(addressText);
  if (raw === null) return { error: 'is not an IPv4 or IPv6 address or CIDR range' };
  const bits = isV6Text ? 128 : 32;
  let prefix = bits;
  if (prefixText !== null) {
    if (!/^(0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
      return { error: `has an invalid prefix length (0-${bits})` };
    }
    prefix = Number(prefixText);
  }
  let version: 4 | 6 = isV6Text ? 6 : 4;
  let base = raw;
  if (isV6Text && raw >> 32n === 0xffffn && prefix >= 96) {
    version = 4;
    base = raw & 0xffffffffn;
    prefix -= 96;
  }
  const width = version === 4 ? 32 : 128;
  const hostMask = (1n << BigInt(width - prefix)) - 1n;
  if ((base & hostMask) !== 0n) {
    const canonical = formatCidr({ version, base: base & ~hostMask, prefix });
    return { error: `has host bits set (did you mean ${canonical}?)` };
  }
  return { cidr: { version, base, prefix } };
}

export interface CidrListProblem {
  index: number;
  entry: string;
  error: string;
}

/**
 * The one parser of CIDR lists (allow lists, trusted proxies): every entry trimmed and parsed; the
 * entries that do not parse are reported with their position, never silently widened.
 */
export function parseCidrList(entries: readonly string[]): { cidrs: Cidr[]; problems: CidrListProblem[] } {
  const cidrs: Cidr[] = [];
  const problems: CidrListProblem[] = [];
  entries.forEach((entry, index) => {
    const parsed = parseCidr(entry.trim());
    if ('error' in parsed) problems.push({ index, entry, error: parsed.error });
    else cidrs.push(parsed.cidr);
  });
  return { cidrs, problems };
}

/** Whether every address of `inner` is in `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return (
    inner.version === outer.version &&
    outer.prefix <= inner.prefix &&
    cidrContains(outer, { version: inner.version, value: inner.base })
  );
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.version !== ip.version) return false;
  const width = cidr.version === 4 ? 32 : 128;
  const shift = BigInt(width - cidr.prefix);
  return ip.value >> shift === cidr.base >> shift;
}

/** The address as its bytes, network order: 4 for IPv4, 16 for IPv6. */
export function ipBytes(ip: IpAddress): number[] {
  const count = ip.version === 4 ? 4 : 16;
  return Array.from({ length: count }, (_, i) => Number((ip.value >> BigInt(8 * (count - 1 - i))) & 0xffn));
}

export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) {
    return [24n, 16n, 8n, 0n].map((s) => ((ip.value >> s) & 0xffn).toString()).join('.');
  }
  const words = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(112 - i * 16)) & 0xffffn));
  // Compress the longest run of two or more zero words (RFC 5952).
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

export function formatCidr(cidr: Cidr): string {
  const address = formatIp({ version: cidr.version, value: cidr.base });
  return cidr.prefix === (cidr.version === 4 ? 32 : 128) ? address : `${address}/${cidr.prefix}`;
}
