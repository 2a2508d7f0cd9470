// Retention of the OAuth rows (docs/design/oauth.md, "Limits and retention"; the sweep is
// in src/sweeps/retention.ts): each prune deletes one batch of the oldest dead rows in the
// order of an index of migrations/0028_oauth_retention.sql, skipping rows a request holds.
// The live rows' statements are in ./oauth.ts.

import type { Queryable } from '../db/pool.js';
import { deleted, type PruneArgs } from './retention.js';

/** Authorization codes expired before the cutoff (a code lives 60 s; a spent one is dead too). */
export function pruneOAuthCodes(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT hash FROM oauth_codes WHERE expires_at < now() - make_interval(secs => $1)
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM oauth_codes c USING old WHERE c.hash = old.hash`,
    a,
  );
}

/**
 * Access and refresh tokens expired before the cutoff. A rotated refresh token stays until
 * it expires, so a reuse within its life is still recognised and revokes the family.
 */
export function pruneOAuthTokens(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT hash FROM oauth_tokens WHERE expires_at < now() - make_interval(secs => $1)
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM oauth_tokens t USING old WHERE t.hash = old.hash`,
    a,
  );
}

/** Grants revoked before the cutoff, with whatever codes and tokens they still have (cascade). */
export function pruneRevokedGrants(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT id FROM oauth_grants WHERE revoked_at < now() - make_interval(secs => $1)
        ORDER BY revoked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM oauth_grants g USING old WHERE g.id = old.id`,
    a,
  );
}

/**
 * Unrevoked grants whose last token pair (or, never exchanged, whose approval) is older than
 * the cutoff: the caller adds the longer token life to the retention, so every token of the
 * grant has expired by then and the client must ask for consent again anyway.
 */
export function pruneLapsedGrants(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT id FROM oauth_grants
        WHERE revoked_at IS NULL AND coalesce(last_used_at, created_at) < now() - make_interval(secs => $1)
        ORDER BY coalesce(last_used_at, created_at) LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM oauth_grants g USING old WHERE g.id = old.id`,
    a,
  );
}

/**
 * Registered clients that hold no grant and registered before the cutoff: a registration
 * nobody approved, or a client whose grants were all pruned. Its client id stops working;
 * an MCP client registers again when its stored id is refused.
 */
export function pruneUnusedClients(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT c.id FROM oauth_clients c
        WHERE c.created_at < now() - make_interval(secs => $1)
          AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
        ORDER BY c.created_at LIMIT $2 FOR UPDATE OF c SKIP LOCKED)
     DELETE FROM oauth_clients c USING old WHERE c.id = old.id`,
    a,
  );
}
