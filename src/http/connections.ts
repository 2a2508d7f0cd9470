// Slow and greedy clients (docs/design/limits.md, "Slow clients"): the deadlines for
// receiving a request (its headers, then the whole of it), and a cap on the connections
// one address holds at once. The deadlines cover only the receiving: once a request is in,
// its answer may take as long as it takes — a long-poll waits up to its wait_seconds, an
// MCP or board stream stays open for hours — and those keep their own deadlines. It does
// not rate-limit requests (rate-limit.ts does).

import { BlockList, isIP, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { addressKey } from './rate-limit.js';

export interface ConnectionLimits {
  /** SWITCHBOARD_REQUEST_TIMEOUT: the whole request (headers and body) must arrive within it. */
  requestTimeoutMs: number;
  /** SWITCHBOARD_HEADERS_TIMEOUT: the headers must arrive within it. */
  headersTimeoutMs: number;
  /** SWITCHBOARD_MAX_CONNECTIONS_PER_IP: open connections per client address (an IPv6 /64). */
  maxPerAddress: number;
}

/**
 * How often Node looks for requests past their deadline. Its default, 30 s, let a
 * trickled request live 30 s past its deadline; a second costs one walk over the open
 * connections' list a second, which is nothing beside serving them.
 */
export const CHECK_INTERVAL_MS = 1_000;

/** The options Node's http.createServer takes for the deadlines. */
export function serverTimeouts(limits: ConnectionLimits): {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    connectionsCheckingInterval: CHECK_INTERVAL_MS,
  };
}

/** The trusted proxies as a BlockList: their connections carry many clients, so no cap applies to them. */
function proxies(trustProxy: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of trustProxy) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(address) === 0) continue;
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/**
 * Applies the deadlines to `server` (set again here, since Fastify overwrites the request
 * deadline of a server it creates) and caps connections per address: past the cap a new
 * connection is closed at once, before any byte of it is read. A trusted proxy's
 * connections are not counted: behind it, every client shares its address.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, trustProxy: readonly string[]): void {
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  const trusted = proxies(trustProxy);
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (!address) return;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (trusted.check(mapped ?? address, mapped || isIP(address) === 4 ? 'ipv4' : 'ipv6')) return;
    const key = addressKey(address);
    const held = open.get(key) ?? 0;
    if (held >= limits.maxPerAddress) {
      socket.destroy();
      return;
    }
    open.set(key, held + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
