// The OAuth authorization server's rows (migrations/0025_oauth.sql, docs/design/oauth.md):
// registered clients, grants (one client acting as one endpoint of one human: a token
// family), authorization codes and tokens, all secrets by their SHA-256. Every lookup that
// vouches for a token also checks the grant, its endpoint and the endpoint's owner, so a
// revoked grant, a revoked or expired endpoint and a disabled human all end a token at once.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { E_COLUMNS, OWNER_ACTIVE, stampSeen, type Endpoint } from './endpoints.js';
import { releaseClaimsOfSql } from './sessions.js';

export interface OAuthClient {
  id: string;
  client_name: string | null;
  redirect_uris: string[];
  metadata: Record<string, unknown>;
  created_at: Date;
}

export async function insertClient(
  db: Queryable,
  a: { id: string; clientName: string | null; redirectUris: string[]; metadata: Record<string, unknown> },
): Promise<OAuthClient> {
  const res = await db.query<OAuthClient>(
    `INSERT INTO oauth_clients (id, client_name, redirect_uris, metadata) VALUES ($1, $2, $3, $4)
     RETURNING id, client_name, redirect_uris, metadata, created_at`,
    [a.id, a.clientName, a.redirectUris, JSON.stringify(a.metadata)],
  );
  return res.rows[0] as OAuthClient;
}

export async function getClient(db: Queryable, id: string): Promise<OAuthClient | null> {
  const res = await db.query<OAuthClient>(
    `SELECT id, client_name, redirect_uris, metadata, created_at FROM oauth_clients WHERE id = $1`,
    [id],
  );
  return res.rows[0] ?? null;
}

/** A consent just given: the grant and its one authorization code, in one statement. */
export async function insertGrantWithCode(
  db: Queryable,
  a: {
    grantId: string;
    clientId: string;
    endpointId: string;
    humanId: string;
    resource: string;
    scope: string | null;
    codeHash: Buffer;
    redirectUri: string;
    codeChallenge: string;
    codeExpiresAt: Date;
  },
): Promise<void> {
  await db.query(
    `WITH g AS (
       INSERT INTO oauth_grants (id, client_id, endpoint_id, human_id, resource, scope)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
     INSERT INTO oauth_codes (hash, grant_id, redirect_uri, code_challenge, expires_at)
     SELECT $7, g.id, $8, $9, $10 FROM g`,
    [
      a.grantId,
      a.clientId,
      a.endpointId,
      a.humanId,
      a.resource,
      a.scope,
      a.codeHash,
      a.redirectUri,
      a.codeChallenge,
      a.codeExpiresAt,
    ],
  );
}

/** A grant as the token endpoint sees it: whose, for what, and whether it can still issue. */
export interface GrantState {
  grant_id: string;
  client_id: string;
  endpoint_id: string;
  resource: string;
  scope: string | null;
  /** The grant is not revoked, and its endpoint is not revoked, not expired, its owner active. */
  live: boolean;
  endpoint_expires_at: Date | null;
}

const GRANT_STATE = `g.id AS grant_id, g.client_id, g.endpoint_id, g.resource, g.scope,
  (g.revoked_at IS NULL AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now())
    AND ${OWNER_ACTIVE('e')}) AS live,
  e.expires_at AS endpoint_expires_at`;

export type CodeRow = GrantState & {
  redirect_uri: string;
  code_challenge: string;
  expired: boolean;
  used: boolean;
};

/**
 * The code and its grant, locked, then marked used in the same transaction: a code is
 * spent by its first presentation whatever that one's fate (docs/design/oauth.md, "Codes").
 */
export async function spendCode(tx: Queryable, hash: Buffer): Promise<CodeRow | null> {
  const res = await tx.query<CodeRow>(
    `SELECT c.redirect_uri, c.code_challenge, c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used,
            ${GRANT_STATE}
       FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id JOIN endpoints e ON e.id = g.endpoint_id
      WHERE c.hash = $1 FOR UPDATE OF c`,
    [hash],
  );
  const row = res.rows[0];
  if (row && !row.used) await tx.query(`UPDATE oauth_codes SET used_at = now() WHERE hash = $1`, [hash]);
  return row ?? null;
}

export type RefreshRow = GrantState & { expired: boolean; used: boolean };

/**
 * A refresh token and its grant, locked, so two refreshes with it run one after the other
 * and the second sees the first's rotation (markRotated). A refusal that is the request's
 * fault (another resource) leaves it usable.
 */
export async function lockRefreshToken(tx: Queryable, hash: Buffer): Promise<RefreshRow | null> {
  const res = await tx.query<RefreshRow>(
    `SELECT t.expires_at <= now() AS expired, t.used_at IS NOT NULL AS used, ${GRANT_STATE}
       FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN endpoints e ON e.id = g.endpoint_id
      WHERE t.hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t`,
    [hash],
  );
  return res.rows[0] ?? null;
}

/** A refresh token that just bought the next pair: presenting it again is reuse. */
export async function markRotated(tx: Queryable, hash: Buffer): Promise<void> {
  await tx.query(`UPDATE oauth_tokens SET used_at = now() WHERE hash = $1`, [hash]);
}

/** A new access and refresh token of the grant; the grant is stamped issued and used. */
export async function insertTokenPair(
  tx: Queryable,
  a: { grantId: string; access: Buffer; accessExpiresAt: Date; refresh: Buffer; refreshExpiresAt: Date },
): Promise<void> {
  await tx.query(
    `WITH t AS (
       INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at)
       VALUES ($2, $1, 'access', $3), ($4, $1, 'refresh', $5))
     UPDATE oauth_grants SET issued_at = coalesce(issued_at, now()), last_used_at = now() WHERE id = $1`,
    [a.grantId, a.access, a.accessExpiresAt, a.refresh, a.refreshExpiresAt],
  );
}

/** The grant and client of a token of either kind (for revocation, RFC 7009). */
export async function grantOfToken(
  db: Queryable,
  hash: Buffer,
): Promise<{ grant_id: string; client_id: string; endpoint_id: string } | null> {
  const res = await db.query<{ grant_id: string; client_id: string; endpoint_id: string }>(
    `SELECT g.id AS grant_id, g.client_id, g.endpoint_id
       FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = $1`,
    [hash],
  );
  return res.rows[0] ?? null;
}

/**
 * Revokes grants, then (a second statement, so it sees a session tagged while the first
 * waited on the grant's lock: tagSession) closes their live MCP sessions as a close does:
 * claims released, `session_closed` told on commit so every instance ends the streams and
 * drops its credential answers. Run in one transaction. Returns the affected endpoints.
 */
export async function revokeGrants(
  tx: Queryable,
  ids: string[],
  reason: string,
): Promise<{ endpoint_ids: string[]; grants_revoked: number; sessions_closed: number }> {
  const revoked = await tx.query<{ endpoint_id: string }>(
    `UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()), revoked_reason = coalesce(revoked_reason, $2)
      WHERE id = ANY($1::text[]) RETURNING endpoint_id`,
    [ids, reason],
  );
  const closed = await tx.query<{ sessions_closed: number }>(
    `WITH closed AS (
       UPDATE mcp_sessions s SET closed_at = now(), stream_open = false
        WHERE s.oauth_grant_id = ANY($1::text[]) AND s.closed_at IS NULL RETURNING s.endpoint_id, s.id),
     ${releaseClaimsOfSql('closed')},
     told AS (SELECT ${notifySql('session_closed', { endpoint_id: 'endpoint_id', session_id: 'id' })} FROM closed)
     SELECT (SELECT count(*) FROM told)::int AS sessions_closed, (SELECT count(*) FROM rel_ready) AS ready`,
    [ids],
  );
  return {
    endpoint_ids: [...new Set(revoked.rows.map((r) => r.endpoint_id))],
    grants_revoked: revoked.rows.length,
    sessions_closed: closed.rows[0]?.sessions_closed ?? 0,
  };
}

/**
 * Binds a just-opened MCP session to the grant whose token opened it, unless the grant was
 * revoked meanwhile (false: the caller discards the session). The grant row is share-locked,
 * so a revoke waits for this to commit and then closes the session too.
 */
export async function tagSession(db: Queryable, endpointId: string, sessionId: string, grantId: string) {
  const res = await db.query(
    `WITH g AS (SELECT id FROM oauth_grants WHERE id = $3 AND revoked_at IS NULL FOR SHARE)
     UPDATE mcp_sessions s SET oauth_grant_id = g.id FROM g
      WHERE s.endpoint_id = $1 AND s.id = $2 AND s.closed_at IS NULL`,
    [endpointId, sessionId, grantId],
  );
  return res.rowCount === 1;
}

/** A grant as the board lists it on its endpoint's page. */
export interface GrantListing {
  id: string;
  client_id: string;
  client_name: string | null;
  created_at: Date;
  last_used_at: Date | null;
  live_sessions: number;
}

/** The live, issued grants of an endpoint of this human, newest first. */
export async function listEndpointGrants(db: Queryable, humanId: string, endpointId: string): Promise<GrantListing[]> {
  const res = await db.query<GrantListing>(
    `SELECT g.id, g.client_id, c.client_name, g.created_at, g.last_used_at,
            (SELECT count(*) FROM mcp_sessions s WHERE s.oauth_grant_id = g.id AND s.closed_at IS NULL)::int
              AS live_sessions
       FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
      WHERE g.human_id = $1 AND g.endpoint_id = $2 AND g.revoked_at IS NULL AND g.issued_at IS NOT NULL
      ORDER BY g.created_at DESC, g.id`,
    [humanId, endpointId],
  );
  return res.rows;
}

/** The live grants of this human with this client (every endpoint), for revoking the client. */
export async function clientGrantIds(db: Queryable, humanId: string, clientId: string): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM oauth_grants WHERE human_id = $1 AND client_id = $2 AND revoked_at IS NULL`,
    [humanId, clientId],
  );
  return res.rows.map((r) => r.id);
}

/** Every live grant this human gave, on any endpoint and to any client. */
export async function humanGrantIds(db: Queryable, humanId: string): Promise<string[]> {
  const res = await db.query<{ id: string }>(`SELECT id FROM oauth_grants WHERE human_id = $1 AND revoked_at IS NULL`, [
    humanId,
  ]);
  return res.rows.map((r) => r.id);
}

/** Whether this grant is one of this human's (revoked or not). */
export async function grantOwner(
  db: Queryable,
  grantId: string,
): Promise<{ human_id: string; client_id: string } | null> {
  const res = await db.query<{ human_id: string; client_id: string }>(
    `SELECT human_id, client_id FROM oauth_grants WHERE id = $1`,
    [grantId],
  );
  return res.rows[0] ?? null;
}

export type OAuthAuthenticated = Endpoint & {
  grant_id: string;
  token_expires_at: Date;
  session_live: boolean | null;
};

/**
 * The live endpoint an OAuth access token acts as, and (with a session id) whether that
 * is a live session opened under the same grant, in one round trip; the same once-a-minute
 * last_seen_at stamps as an `sbk_` credential (store/endpoints.ts).
 */
export async function authenticateOAuthAccess(
  db: Queryable,
  hash: Buffer,
  sessionId: string | null,
): Promise<OAuthAuthenticated | null> {
  const res = await db.query<OAuthAuthenticated & { session_stale: boolean; endpoint_stale: boolean }>({
    name: 'authenticate_oauth_access',
    text: `SELECT ${E_COLUMNS}, g.id AS grant_id, t.expires_at AS token_expires_at,
        CASE WHEN $2::text IS NULL THEN NULL ELSE s.id IS NOT NULL END AS session_live,
        coalesce(s.last_seen_at < now() - interval '1 minute', false) AS session_stale,
        coalesce(e.last_seen_at < now() - interval '1 minute', true) AS endpoint_stale
       FROM oauth_tokens t
       JOIN oauth_grants g ON g.id = t.grant_id AND g.revoked_at IS NULL
       JOIN endpoints e ON e.id = g.endpoint_id
       LEFT JOIN mcp_sessions s ON s.endpoint_id = e.id AND s.id = $2::text AND s.closed_at IS NULL
        AND s.oauth_grant_id = g.id
      WHERE t.hash = $1 AND t.kind = 'access' AND t.expires_at > now()
        AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now()) AND ${OWNER_ACTIVE('e')}`,
    values: [hash, sessionId],
  });
  const row = res.rows[0];
  if (!row) return null;
  const { session_stale: sessionStale, endpoint_stale: endpointStale, ...found } = row;
  await stampSeen(db, found.id, sessionId, endpointStale, sessionStale);
  return found;
}
