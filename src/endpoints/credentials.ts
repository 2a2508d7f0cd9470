// The endpoint behind an `sbk_…` bearer credential, for /mcp. Only live endpoints
// (not revoked, not expired) match; anything else is simply no endpoint, and the
// surface answers 401 without saying which of the reasons applied.

import type { Queryable } from '../db/pool.js';
import { hashSecret } from '../identity/secrets.js';
import { authenticateEndpoint, authenticateEndpointSession, type Endpoint } from '../store/endpoints.js';

export type { Endpoint } from '../store/endpoints.js';

/** A credential looks like `sbk_` and 43 base64url characters; others are not looked up. */
const CREDENTIAL = /^sbk_[A-Za-z0-9_-]{20,100}$/;

export interface Credentialed {
  endpoint: Endpoint;
  /** When a session id was given: whether it names a live session of this endpoint (stamped as seen). */
  sessionLive: boolean | null;
}

/**
 * How long a (credential, live session) answer is reused. Every MCP call authenticates;
 * reading the endpoint and session each time was a third of an MCP cycle's PostgreSQL
 * CPU (bench/README.md, mcp). An entry leaves sooner when this process revokes the
 * endpoint or closes the session (synchronously, `forgetCredentials`) and when any
 * instance does (the bus's endpoint_revoked and session_closed, mcp/server.ts), and an
 * endpoint's expiry is checked on every use, so this bounds only what a notification
 * lost with the LISTEN connection can cost. The session's once-a-minute last_seen_at
 * stamp still happens: it rides on the read that refills an entry.
 */
export const CREDENTIAL_REUSE_MS = 2_000;
/** Entries kept at most (oldest dropped first): one per live session calling this instance. */
const MAX_ENTRIES = 10_000;

interface Remembered {
  endpoint: Endpoint;
  sessionId: string;
  until: number;
}

// Keyed by the credential's hash (never the credential) and the session id. Only
// positive answers for a live session are kept: a new endpoint or session must work at
// once, and a refusal is cheap to repeat. Endpoint rows are read-only to their users;
// the fields that change (revoked_at, last_seen_at) are not what a call decides on.
const remembered = new Map<string, Remembered>();

/** Drops what this process remembers of an endpoint's credential, or of one of its sessions. */
export function forgetCredentials(endpointId: string, sessionId?: string): void {
  for (const [key, entry] of remembered) {
    if (entry.endpoint.id === endpointId && (sessionId === undefined || entry.sessionId === sessionId)) {
      remembered.delete(key);
    }
  }
}

function recall(key: string, now: number): Credentialed | null {
  const entry = remembered.get(key);
  if (!entry) return null;
  const expiresAt = entry.endpoint.expires_at;
  if (entry.until <= now || (expiresAt !== null && expiresAt.getTime() <= now)) {
    remembered.delete(key);
    return null;
  }
  return { endpoint: entry.endpoint, sessionLive: true };
}

function remember(key: string, endpoint: Endpoint, sessionId: string, until: number): void {
  remembered.delete(key);
  remembered.set(key, { endpoint, sessionId, until });
  if (remembered.size > MAX_ENTRIES) remembered.delete(remembered.keys().next().value as string);
}

/** The endpoint behind the bearer and, in the same round trip, the state of the named session. */
export async function endpointForCredential(
  db: Queryable,
  bearer: string,
  sessionId: string | null = null,
  reuseMs = CREDENTIAL_REUSE_MS,
): Promise<Credentialed | null> {
  if (!CREDENTIAL.test(bearer)) return null;
  const hash = hashSecret(bearer);
  if (sessionId === null) {
    const endpoint = await authenticateEndpoint(db, hash);
    return endpoint && { endpoint, sessionLive: null };
  }
  const key = `${hash.toString('base64')} ${sessionId}`;
  const now = Date.now();
  const known = recall(key, now);
  if (known) return known;
  const row = await authenticateEndpointSession(db, hash, sessionId);
  if (!row) return null;
  const { session_live: sessionLive, ...endpoint } = row;
  if (sessionLive) remember(key, endpoint, sessionId, now + reuseMs);
  return { endpoint, sessionLive };
}
