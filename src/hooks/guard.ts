// The SSRF guard of notify hooks: which URLs a hook may have, and which address a
// delivery may connect to. Checked when a hook is created and again before every attempt,
// because DNS answers change: the hostname is resolved here (by an injectable resolver),
// every address it resolves to must be allowed, and the delivery then connects to the
// checked address itself, never re-resolving — a rebinding name cannot slip through.
// Refused: anything but https (http only when the operator allows it), credentials in the
// URL, and the IPv4 special-purpose ranges (loopback, private, CGNAT, link-local,
// documentation, multicast, reserved). IPv6 is allowed only inside global unicast
// 2000::/3 and outside the special-purpose ranges there (IANA's registry: the IETF
// protocol block with Teredo and ORCHID, documentation, 6to4), so every range that embeds
// or translates to IPv4 (IPv4-compatible, -mapped, -translated, NAT64), site-local, ULA,
// link-local, multicast and whatever IANA assigns later outside 2000::/3 is refused by
// default. An operator CIDR allow-list may name any of them.

import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { invalidArgument } from '../domain/errors.js';

export interface GuardPolicy {
  allowHttp: boolean;
  allowCidrs: string[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all of its addresses (tests inject one; default: the system's). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface HookTarget {
  url: URL;
  /** The checked address the delivery connects to. */
  address: string;
  family: 4 | 6;
}

export const MAX_URL_CHARS = 2048;

const BLOCKED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  // The deprecated 6to4 relay anycast (RFC 7526): a relay decides where the packet goes.
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
/**
 * The one IPv6 block a hook may reach: global unicast (RFC 4291 §2.4). Everything outside
 * it is loopback, unspecified, embedded or translated IPv4 (::/96, ::ffff:0:0/96,
 * ::ffff:0:0:0/96, 64:ff9b::/96, 64:ff9b:1::/48), discard (100::/64), SRv6 SIDs
 * (5f00::/16), ULA (fc00::/7), site-local (fec0::/10), link-local, multicast, or not
 * assigned yet: no webhook receiver lives there.
 */
const GLOBAL_V6 = '2000::/3';
/** The special-purpose ranges inside 2000::/3 that are not globally reachable unicast. */
const BLOCKED_V6 = [
  // The IETF protocol assignments: Teredo (2001::/32, tunnels to an embedded IPv4),
  // benchmarking (2001:2::/48), ORCHID and ORCHIDv2 (2001:10::/28, 2001:20::/28), and the
  // rest of the block; the few anycast services in it are not webhook receivers.
  '2001::/23',
  '2001:db8::/32',
  // 6to4 (2002:AABB:CCDD::/48 carries IPv4 A.B.C.D): the whole range is refused rather than
  // judging the embedded address, because 6to4 is deprecated (RFC 7526), no real receiver
  // needs it, and a relay or local 6to4 interface decides where the packet really goes.
  '2002::/16',
  // Documentation (RFC 9637), beside 2001:db8::/32.
  '3fff::/20',
];

function blockList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', bits] = cidr.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits), family);
  }
  return list;
}

const BLOCKED = blockList([...BLOCKED_V4, ...BLOCKED_V6]);
const GLOBAL = blockList([GLOBAL_V6]);

/**
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, or ::ffff:aabb:ccdd as the URL parser
 * writes it) is judged as the IPv4 address it maps.
 */
function normalise(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], type: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex?.[1] && hex[2]) {
    const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
    return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), type: 'ipv4' };
  }
  return { address, type: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export class HookGuard {
  private readonly allowed: BlockList;

  constructor(
    private readonly policy: GuardPolicy,
    private readonly resolver: Resolver = systemResolver,
  ) {
    this.allowed = blockList(policy.allowCidrs);
  }

  /** The URL's shape: scheme, no credentials, a host, a sane length. Throws invalid_argument `url`. */
  checkUrl(text: unknown): URL {
    if (typeof text !== 'string' || text.length === 0) throw invalidArgument('url', 'is required');
    if (text.length > MAX_URL_CHARS) throw invalidArgument('url', `must be at most ${MAX_URL_CHARS} characters`);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalidArgument('url', 'is not an absolute URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.policy.allowHttp)) {
      throw invalidArgument('url', this.policy.allowHttp ? 'must be https or http' : 'must be https');
    }
    if (url.username || url.password) throw invalidArgument('url', 'must not carry credentials');
    if (!url.hostname) throw invalidArgument('url', 'needs a host');
    return url;
  }

  /** Whether one address may be reached: not in a refused range, or named by the allow-list. */
  addressAllowed(address: string): boolean {
    const n = normalise(address);
    if (this.allowed.check(n.address, n.type)) return true;
    if (n.type === 'ipv6' && !GLOBAL.check(n.address, 'ipv6')) return false;
    return !BLOCKED.check(n.address, n.type);
  }

  /** Resolves the URL's host and checks every address; the first is the one to connect to. */
  async resolve(text: string): Promise<HookTarget> {
    const url = this.checkUrl(text);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: ResolvedAddress[];
    if (isIP(host) !== 0) {
      addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.resolver(host);
      } catch {
        throw invalidArgument('url', `host ${host} does not resolve`);
      }
    }
    const first = addresses[0];
    if (!first) throw invalidArgument('url', `host ${host} does not resolve`);
    const refused = addresses.find((a) => !this.addressAllowed(a.address));
    if (refused) {
      throw invalidArgument(
        'url',
        `host ${host} resolves to ${refused.address}, an address that is not public (loopback, private, link-local, multicast or special-purpose) ` +
          '(an operator may allow it with SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS)',
      );
    }
    return { url, address: first.address, family: first.family };
  }
}
