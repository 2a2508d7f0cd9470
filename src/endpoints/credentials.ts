// The endpoint behind an `sbk_…` bearer credential, or an `sbo_…` OAuth access token
// (docs/design/oauth.md, "Tokens at /mcp"), for /mcp. Only live endpoints (not revoked,
// not expired) match; anything else is simply no endpoint, and the surface answers 401
// without saying which of the reasons applied. Both kinds resolve to the same endpoint
// record, so every verb, tenancy rule, limit and doorbell behaves the same for either.

import type { Queryable } from '../db/pool.js';
import { hashSecret } from '../identity/secrets.js';
import {
  authenticateEndpoint,
  authenticateEndpointSession,
  authenticatePreviousCredential,
  type Endpoint,
} from '../store/endpoints.js';
import { authenticateOAuthAccess } from '../store/oauth.js';

export type { Endpoint } from '../store/endpoints.js';

/** A credential looks like `sbk_` (or an OAuth access token `sbo_`) and 43 base64url characters; others are not looked up. */
const CREDENTIAL = /^sb[ko]_[A-Za-z0-9_-]{20,100}$/;
/** The prefix of an OAuth access token (src/oauth/tokens.ts). */
export const OAUTH_ACCESS_PREFIX = 'sbo_';

/** Whether a bearer could be a credential at all: one that is not is refused without a database read. */
export function isCredentialShaped(bearer: string): boolean {
  return CREDENTIAL.test(bearer);
}

export interface Credentialed {
  endpoint: Endpoint;
  /** When a session id was given: whether it names a live session of this endpoint (stamped as seen). */
  sessionLive: boolean | null;
  /** For an OAuth access token: its grant, which a session it opens is bound to. */
  grantId?: string;
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
  /** An OAuth access token's grant and expiry (ms), checked on every use like the endpoint's. */
  grant?: { id: string; expiresAt: number };
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
    if (bearer.startsWith(OAUTH_ACCESS_PREFIX)) return this.#oauth(db, hash, sessionId);
    if (sessionId === null) {
      const endpoint = (await authenticateEndpoint(db, hash)) ?? (await this.#previous(db, hash, null))?.endpoint;
      return endpoint ? { endpoint, sessionLive: null } : null;
    }
    const key = `${hash.toString('base64')} ${sessionId}`;
    const now = Date.now();
    const known = this.#recall(key, now);
    if (known) return known;
    const row = await authenticateEndpointSession(db, hash, sessionId);
    if (!row) return this.#previous(db, hash, sessionId);
    const { session_live: sessionLive, ...endpoint } = row;
    if (sessionLive) this.#remember(key, endpoint, sessionId, now + this.reuseMs);
    return { endpoint, sessionLive };
  }

  /**
   * A credential replaced by a rotation, during its grace: answered but never remembered,
   * so its end is not outlived by a cached answer.
   */
  async #previous(db: Queryable, hash: Buffer, sessionId: string | null): Promise<Credentialed | null> {
    const row = await authenticatePreviousCredential(db, hash, sessionId);
    if (!row) return null;
    const { session_live: sessionLive, ...endpoint } = row;
    return { endpoint, sessionLive: sessionId === null ? null : sessionLive };
  }

  async #oauth(db: Queryable, hash: Buffer, sessionId: string | null): Promise<Credentialed | null> {
    const key = `${hash.toString('base64')} ${sessionId}`;
    const now = Date.now();
    if (sessionId !== null) {
      const known = this.#recall(key, now);
      if (known) return known;
    }
    const row = await authenticateOAuthAccess(db, hash, sessionId);
    if (!row) return null;
    const { session_live: sessionLive, grant_id: grantId, token_expires_at: tokenExpiresAt, ...endpoint } = row;
    if (sessionId !== null && sessionLive) {
      const grant = { id: grantId, expiresAt: tokenExpiresAt.getTime() };
      this.#remember(key, endpoint, sessionId, now + this.reuseMs, grant);
    }
    return { endpoint, sessionLive, grantId };
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
    const tokenEnded = entry.grant !== undefined && entry.grant.expiresAt <= now;
    if (entry.until <= now || (expiresAt !== null && expiresAt.getTime() <= now) || tokenEnded) {
      this.#drop(key);
      return null;
    }
    return {
      endpoint: entry.endpoint,
      sessionLive: true,
      ...(entry.grant ? { grantId: entry.grant.id } : {}),
    };
  }

  #remember(
    key: string,
    endpoint: Endpoint,
    sessionId: string,
    until: number,
    grant?: { id: string; expiresAt: number },
  ): void {
    this.#drop(key);
    this.#entries.set(key, { endpoint, sessionId, until, ...(grant ? { grant } : {}) });
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
