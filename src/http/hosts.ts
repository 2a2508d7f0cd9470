// Which Host and Origin this server answers (docs/design/limits.md, "Host and Origin"):
// the guard against DNS rebinding, where a page on a name the attacker controls re-points
// that name at 127.0.0.1 and talks to a loopback server as if it were its own origin.
// The allow-list is built once from the config (src/config/schema.ts `allowedHosts`); the
// host hook (http/app.ts) refuses a foreign Host with 421 before any route runs, and /mcp
// and /ws refuse a foreign Origin with 403 through `originAllowed`. This module only
// decides; it answers nothing itself.

/** The operator routes a prober reaches by the pod or node address: they carry nothing. */
const PROBES = new Set(['/healthz', '/readyz']);

/** The hostname of a Host header value (lower case, IPv6 in brackets), or null when it is not one. */
export function hostnameOf(host: string | undefined): string | null {
  if (!host || /[\s/?#@\\]/.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** Whether a request with this Host header may be served; `allowed` null: any. */
export function hostAllowed(allowed: readonly string[] | null, host: string | undefined): boolean {
  if (allowed === null) return true;
  const name = hostnameOf(host);
  return name !== null && allowed.includes(name);
}

/**
 * Whether the path is exempt from the Host check: the health probes, and /metrics when it
 * takes a bearer token (a scraper addresses the pod, and a rebinding page cannot know the
 * token; an open /metrics is checked like every other path).
 */
export function hostExempt(url: string, metricsTokenSet: boolean): boolean {
  const path = url.split('?')[0] ?? '';
  return PROBES.has(path) || (metricsTokenSet && path === '/metrics');
}

export interface OriginCheck {
  /** The allowed whole origins (config.allowedOrigins). */
  origins: readonly string[];
  /** The request's Host header (already checked by the host hook). */
  host: string | undefined;
  /** The request's scheme as the host sees it ("http" or "https"). */
  protocol: string;
}

/**
 * Whether a request with this `Origin` may use /mcp or /ws. No Origin: yes (curl, the
 * SDK, the bridge send none; a browser always sends one on these requests). Otherwise the
 * whole origin — scheme, host and port — must be an allowed one (the public URL's, the
 * listen address's, SWITCHBOARD_ALLOWED_HOSTS), or the very origin the request was
 * addressed to. A host name alone is not enough: a page of another server on the same
 * machine (http://127.0.0.1:3000) shares the name but is another origin. `null` (a
 * sandboxed frame, a file: page) is never allowed.
 */
export function originAllowed(origin: string | undefined, check: OriginCheck): boolean {
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (check.origins.includes(parsed.origin)) return true;
  // A Host with a user part or a path would parse as some other origin: never the addressed one.
  if (check.host === undefined || /[\s/?#@\\]/.test(check.host)) return false;
  try {
    return parsed.origin === new URL(`${check.protocol}://${check.host}`).origin;
  } catch {
    return false;
  }
}
