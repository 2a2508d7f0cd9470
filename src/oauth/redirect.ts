// Redirect URIs (docs/design/oauth.md, "Clients"): registered as https, or as http on a
// loopback address for native apps (RFC 8252 §7.3), never with a fragment; compared
// exactly at authorize and token (RFC 9700 §4.1.3), except that a loopback URI matches
// with any port, because a native app takes whatever port is free when it runs.

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
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
