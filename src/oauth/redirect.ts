// Redirect URIs (docs/design/oauth.md, "Clients"): registered as https, or as http on a
// loopback address for native apps (RFC 8252 §7.3), never with a fragment, and only on a
// host of LDH labels or an IP literal (the origin goes into the consent page's CSP); compared
// exactly at authorize and token (RFC 9700 §4.1.3), except that a loopback URI matches
// with any port, because a native app takes whatever port is free when it runs.

import { isIP } from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
/**
 * A host name of LDH labels (RFC 1123: letters, digits and inner hyphens, 1–63 each, dot
 * separated), as the URL parser leaves it: lower case, an IDN as its xn-- form, an IPv4
 * address in dotted decimal. The parser lets through characters such as `'`, `;` and `*`
 * in a host, which would change the meaning of a Content-Security-Policy they reach.
 */
const LDH_HOST = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Whether the URL's host is LDH labels, an IPv4 literal or a bracketed IPv6 literal. */
export function plainHost(url: URL): boolean {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  return host.length <= 253 && LDH_HOST.test(host);
}
/** Long enough for any real callback; a registration is a public write. */
export const MAX_REDIRECT_URI = 2000;

/** Why this URI cannot be registered, or null. */
export function redirectProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI) return `must be at most ${MAX_REDIRECT_URI} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry user information';
  if (!plainHost(url)) return 'must name its host by letters, digits, hyphens and dots, or by an IP address';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must be https, or http on 127.0.0.1, [::1] or localhost';
}

function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/** Whether a requested redirect URI is one of the registered ones. */
export function redirectMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  let asked: URL;
  try {
    asked = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopback(asked) || asked.hash !== '') return false;
  return registered.some((r) => {
    const known = new URL(r);
    if (!isLoopback(known)) return false;
    // Any port: compare the rest exactly, as written.
    known.port = '';
    const withoutPort = new URL(asked.href);
    withoutPort.port = '';
    return known.href === withoutPort.href;
  });
}
