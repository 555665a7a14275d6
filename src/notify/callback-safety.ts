import { isIP } from 'node:net';

// Which addresses the gateway may POST a notification to. A merchant chooses callback_url, so
// without these rules anyone with a merchant account could make the gateway call the cloud
// metadata service or an internal admin port. The rules apply to the address actually connected
// to (after DNS), see callback-agent.ts; here are the pure parts.

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved';

export interface IpAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

export interface Cidr extends IpAddress {
  prefix: number;
}

export interface CallbackPolicy {
  /** `live` delivers only to public addresses; `sandbox` also to loopback and private ones. */
  mode: 'sandbox' | 'live';
  /** Operator opt-ins: addresses in these ranges are allowed whatever their kind. */
  allow: readonly Cidr[];
}

export type AddressVerdict =
  { allowed: true; kind: AddressKind } | { allowed: false; kind: AddressKind; reason: string };

/** Parses an IPv4 or IPv6 literal (brackets and an IPv6 zone are accepted); undefined otherwise. */
export function parseIp(text: string): IpAddress | undefined {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const family = isIP(s);
  if (family === 4) return { family: 4, bytes: Uint8Array.from(s.split('.').map(Number)) };
  if (family === 6) return { family: 6, bytes: parseIpv6(s) };
  return undefined;
}

function parseIpv6(s: string): Uint8Array {
  // isIP has validated the text; only the layout is worked out here.
  const words: number[] = [];
  const toWords = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(group, 16));
      }
    }
    return out;
  };
  const gap = s.indexOf('::');
  if (gap >= 0) {
    const head = toWords(s.slice(0, gap));
    const tail = toWords(s.slice(gap + 2));
    words.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  } else {
    words.push(...toWords(s));
  }
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

/** Parses `10.0.0.0/8`, `fd00::/8`, or a bare address (a single-address range). Throws with a fix-it message. */
export function parseCidr(text: string): Cidr {
  const [addr = '', prefixText, extra] = text.trim().split('/');
  const ip = parseIp(addr);
  const max = ip?.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!ip || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
    throw new Error(`"${text}" is not an address range; write it like 10.0.0.0/8, 203.0.113.7 or fd00::/8`);
  }
  return { ...ip, prefix };
}

/** Parses a comma- or space-separated list of CIDRs (NOTIFY_ALLOW_CIDRS). */
export function parseCidrList(text: string | readonly string[]): Cidr[] {
  const items = typeof text === 'string' ? text.split(/[\s,]+/) : text;
  return items.filter((s) => s.trim() !== '').map(parseCidr);
}

export function inCidr(ip: IpAddress, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((ip.bytes[i] ?? 0) & mask) !== ((cidr.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const table = (rows: Array<[string, AddressKind]>) => rows.map(([c, kind]) => ({ cidr: parseCidr(c), kind }));

// IANA special-purpose registries. First match wins, so narrower ranges come first.
const V4_SPECIAL = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

const V6_SPECIAL = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'reserved'],
  ['100::/64', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['2001::/23', 'reserved'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
]);

// IPv6 forms that carry an IPv4 address which is what is finally reached: classified by that address.
const V4_MAPPED = parseCidr('::ffff:0:0/96');
const NAT64 = parseCidr('64:ff9b::/96');
const SIX_TO_FOUR = parseCidr('2002::/16');
const GLOBAL_UNICAST = parseCidr('2000::/3');

/** The IPv4 address inside an IPv4-mapped, NAT64 or 6to4 IPv6 address. */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  if (inCidr(ip, V4_MAPPED) || inCidr(ip, NAT64)) return { family: 4, bytes: ip.bytes.slice(12, 16) };
  if (inCidr(ip, SIX_TO_FOUR)) return { family: 4, bytes: ip.bytes.slice(2, 6) };
  return undefined;
}

export function classifyAddress(ip: IpAddress): AddressKind {
  const v4 = embeddedIpv4(ip);
  if (v4) return classifyAddress(v4);
  const specials = ip.family === 4 ? V4_SPECIAL : V6_SPECIAL;
  for (const { cidr, kind } of specials) if (inCidr(ip, cidr)) return kind;
  // Outside 2000::/3 nothing is assigned for global unicast (this covers ::/96 IPv4-compatible too).
  if (ip.family === 6 && !inCidr(ip, GLOBAL_UNICAST)) return 'reserved';
  return 'public';
}

const SANDBOX_EXTRA: ReadonlySet<AddressKind> = new Set(['loopback', 'private']);

/** May the gateway connect to this address to deliver a notification? */
export function checkAddress(address: string, policy: CallbackPolicy): AddressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, kind: 'reserved', reason: `${address} is not an IP address` };
  const kind = classifyAddress(ip);
  if (kind === 'public') return { allowed: true, kind };
  if (policy.mode === 'sandbox' && SANDBOX_EXTRA.has(kind)) return { allowed: true, kind };
  const v4 = ip.family === 6 && inCidr(ip, V4_MAPPED) ? embeddedIpv4(ip) : undefined;
  if (policy.allow.some((c) => inCidr(ip, c) || (v4 !== undefined && inCidr(v4, c)))) return { allowed: true, kind };
  const where =
    policy.mode === 'live'
      ? 'live mode delivers only to public addresses'
      : 'sandbox mode delivers only to public, private and loopback addresses';
  return {
    allowed: false,
    kind,
    reason: `callback address ${address} is ${kind === 'unspecified' ? 'unspecified' : `a ${kind} address`} (${where}; an operator can allow it with NOTIFY_ALLOW_CIDRS)`,
  };
}

/**
 * Checks every address a callback host resolved to; one forbidden address refuses the host, so
 * that a name resolving to both a public and an internal address cannot be used to reach the latter.
 */
export function checkResolved(hostname: string, addresses: readonly string[], policy: CallbackPolicy): AddressVerdict {
  if (addresses.length === 0)
    return { allowed: false, kind: 'reserved', reason: `callback host ${hostname} resolved to no address` };
  let first: AddressVerdict | undefined;
  for (const a of addresses) {
    const v = checkAddress(a, policy);
    if (!v.allowed)
      return { ...v, reason: `callback host ${hostname} resolves to ${v.reason.replace(/^callback address /, '')}` };
    first ??= v;
  }
  return first!;
}

/** The error of a refused destination; its message is what the attempt records. */
export class CallbackRefusedError extends Error {
  override readonly name = 'CallbackRefusedError';
  readonly code = 'CALLBACK_REFUSED';
}
