// The SSRF guard of notify hooks: which URLs a hook may have, and which address a
// delivery may connect to. Checked when a hook is created and again before every attempt,
// because DNS answers change: the hostname is resolved here (by an injectable resolver),
// every address it resolves to must be allowed, and the delivery then connects to the
// checked address itself, never re-resolving — a rebinding name cannot slip through.
// Refused: anything but https (http only when the operator allows it), credentials in the
// URL, and loopback, private, CGNAT, link-local, ULA, multicast and reserved addresses,
// including the IPv6 ranges that embed or translate to IPv4 (IPv4-compatible, NAT64, 6to4),
// unless an operator CIDR allow-list names them.

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
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const BLOCKED_V6 = [
  '::/128',
  '::1/128',
  // IPv4-compatible addresses (::a.b.c.d, deprecated by RFC 4291): a stack that still
  // routes them reaches the embedded IPv4 address, so the whole range is refused.
  '::/96',
  '64:ff9b::/96',
  // Local-use NAT64 (RFC 8215): translates to whatever IPv4 the operator's network maps,
  // private ranges included.
  '64:ff9b:1::/48',
  '100::/64',
  '2001:db8::/32',
  // 6to4 (2002:AABB:CCDD::/48 carries IPv4 A.B.C.D): the whole range is refused rather than
  // judging the embedded address, because 6to4 is deprecated (RFC 7526), no real receiver
  // needs it, and a relay or local 6to4 interface decides where the packet really goes.
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
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

const BLOCKED = (() => {
  const list = blockList(BLOCKED_V4);
  for (const cidr of BLOCKED_V6) {
    const [address = '', bits = '128'] = cidr.split('/');
    list.addSubnet(address, Number(bits), 'ipv6');
  }
  return list;
})();

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as the IPv4 address it maps. */
function normalise(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], type: 'ipv4' };
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
        `host ${host} resolves to ${refused.address}, a loopback, private, link-local or multicast address ` +
          '(an operator may allow it with SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS)',
      );
    }
    return { url, address: first.address, family: first.family };
  }
}
