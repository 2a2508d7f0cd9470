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
 * endpoint or closes the session (synchronously, `CredentialCache.forget`, by the use
 * cases given the cache) and when any instance does (the bus's endpoint_revoked and
 * session_closed, mcp/server.ts), and an endpoint's expiry is checked on every use, so
 * this bounds only what a notification lost with the LISTEN connection can cost. The
 * session's once-a-minute last_seen_at stamp still happens: it rides on the read that
 * refills an entry.
 */
export const CREDENTIAL_REUSE_MS = 2_000;
/** Entries kept at most (oldest dropped first): one per live session calling this instance. */
export const CREDENTIAL_CACHE_ENTRIES = 10_000;

interface Remembered {
  endpoint: Endpoint;
  sessionId: string;
  until: number;
}

/** What a use case that revokes an endpoint or closes a session needs of the cache. */
export interface CredentialForgetting {
  forget(endpointId: string, sessionId?: string): void;
}

/**
 * The (credential, live session) answers one process reuses. Owned by whoever builds the
 * process (one per app; mcp/server.ts builds one when given none) and passed to /mcp's
 * authentication and to the use cases that end what an entry vouches for.
 *
 * Keyed by the credential's hash (never the credential) and the session id. Only
 * positive answers for a live session are kept: a new endpoint or session must work at
 * once, and a refusal is cheap to repeat. Endpoint rows are read-only to their users;
 * the fields that change (revoked_at, last_seen_at) are not what a call decides on.
 */
export class CredentialCache implements CredentialForgetting {
  /** How long an answer is reused, in ms. */
  readonly reuseMs: number;
  readonly #maxEntries: number;
  /** Oldest first (a refill moves an entry to the end). */
  readonly #entries = new Map<string, Remembered>();
  /** Endpoint id → its keys, so forgetting an endpoint or a session reads only its own entries. */
  readonly #byEndpoint = new Map<string, Set<string>>();

  constructor(options: { reuseMs?: number; maxEntries?: number } = {}) {
    this.reuseMs = options.reuseMs ?? CREDENTIAL_REUSE_MS;
    this.#maxEntries = options.maxEntries ?? CREDENTIAL_CACHE_ENTRIES;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The endpoint behind the bearer and, in the same round trip, the state of the named session. */
  async endpointFor(db: Queryable, bearer: string, sessionId: string | null = null): Promise<Credentialed | null> {
    if (!CREDENTIAL.test(bearer)) return null;
    const hash = hashSecret(bearer);
    if (sessionId === null) {
      const endpoint = await authenticateEndpoint(db, hash);
      return endpoint && { endpoint, sessionLive: null };
    }
    const key = `${hash.toString('base64')} ${sessionId}`;
    const now = Date.now();
    const known = this.#recall(key, now);
    if (known) return known;
    const row = await authenticateEndpointSession(db, hash, sessionId);
    if (!row) return null;
    const { session_live: sessionLive, ...endpoint } = row;
    if (sessionLive) this.#remember(key, endpoint, sessionId, now + this.reuseMs);
    return { endpoint, sessionLive };
  }

  /** Drops what this cache holds of an endpoint's credential, or of one of its sessions. */
  forget(endpointId: string, sessionId?: string): void {
    const keys = this.#byEndpoint.get(endpointId);
    if (!keys) return;
    for (const key of [...keys]) {
      if (sessionId === undefined || this.#entries.get(key)?.sessionId === sessionId) this.#drop(key);
    }
  }

  #recall(key: string, now: number): Credentialed | null {
    const entry = this.#entries.get(key);
    if (!entry) return null;
    const expiresAt = entry.endpoint.expires_at;
    if (entry.until <= now || (expiresAt !== null && expiresAt.getTime() <= now)) {
      this.#drop(key);
      return null;
    }
    return { endpoint: entry.endpoint, sessionLive: true };
  }

  #remember(key: string, endpoint: Endpoint, sessionId: string, until: number): void {
    this.#drop(key);
    this.#entries.set(key, { endpoint, sessionId, until });
    const keys = this.#byEndpoint.get(endpoint.id);
    if (keys) keys.add(key);
    else this.#byEndpoint.set(endpoint.id, new Set([key]));
    if (this.#entries.size > this.#maxEntries) this.#drop(this.#entries.keys().next().value as string);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    const keys = this.#byEndpoint.get(entry.endpoint.id);
    keys?.delete(key);
    if (keys?.size === 0) this.#byEndpoint.delete(entry.endpoint.id);
  }
}
