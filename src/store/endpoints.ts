// Endpoints: one logical agent each, owned by one human, with its granted queues and
// verbs and a hashed bearer credential. Reads by operators are scoped by the owning
// human; the credential lookup (for /mcp) is by hash.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';

export interface Endpoint {
  id: string;
  human_id: string;
  name: string;
  slug: string;
  queues: string[];
  verbs: string[];
  default_lease_seconds: number | null;
  credential_prefix: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_seen_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, human_id, name, slug, queues, verbs, default_lease_seconds, credential_prefix,
  expires_at, revoked_at, last_seen_at, created_at`;

export interface InsertEndpointArgs {
  id: string;
  humanId: string;
  name: string;
  slug: string;
  queues: string[];
  verbs: string[];
  defaultLeaseSeconds: number | null;
  expiresAt: Date | null;
  credentialHash?: Buffer | null;
  credentialPrefix?: string | null;
}

export async function insertEndpoint(db: Queryable, a: InsertEndpointArgs): Promise<Endpoint> {
  try {
    const res = await db.query<Endpoint>(
      `INSERT INTO endpoints (id, human_id, name, slug, queues, verbs, default_lease_seconds, expires_at,
         credential_hash, credential_prefix)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [
        a.id,
        a.humanId,
        a.name,
        a.slug,
        a.queues,
        a.verbs,
        a.defaultLeaseSeconds,
        a.expiresAt,
        a.credentialHash ?? null,
        a.credentialPrefix ?? null,
      ],
    );
    return res.rows[0] as Endpoint;
  } catch (err) {
    throw translatePgError(err, `an endpoint with slug ${a.slug} already exists`, 'name');
  }
}

export async function getEndpoint(db: Queryable, id: string): Promise<Endpoint | null> {
  const res = await db.query<Endpoint>(`SELECT ${COLUMNS} FROM endpoints WHERE id = $1`, [id]);
  return res.rows[0] ?? null;
}

export async function listEndpoints(db: Queryable, humanId: string): Promise<Endpoint[]> {
  const res = await db.query<Endpoint>(`SELECT ${COLUMNS} FROM endpoints WHERE human_id = $1 ORDER BY created_at, id`, [
    humanId,
  ]);
  return res.rows;
}

/** One of this human's endpoints by id or slug; another human's answers null. */
export async function getEndpointByRef(db: Queryable, humanId: string, ref: string): Promise<Endpoint | null> {
  const res = await db.query<Endpoint>(
    `SELECT ${COLUMNS} FROM endpoints WHERE human_id = $1 AND (id = $2 OR slug = $2)`,
    [humanId, ref],
  );
  return res.rows[0] ?? null;
}

/**
 * The live endpoint holding this credential (not revoked, not past expiry). last_seen_at
 * is stamped at most once a minute: every session of an endpoint authenticates on every
 * MCP call, and a write each time would serialise them all on this one row.
 */
export async function authenticateEndpoint(db: Queryable, credentialHash: Buffer): Promise<Endpoint | null> {
  const res = await db.query<Endpoint>({
    name: 'authenticate_endpoint',
    text: `WITH e AS (
       SELECT ${COLUMNS} FROM endpoints
        WHERE credential_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())),
     touched AS (
       UPDATE endpoints SET last_seen_at = now() FROM e
        WHERE endpoints.id = e.id AND (e.last_seen_at IS NULL OR e.last_seen_at < now() - interval '1 minute'))
     SELECT * FROM e`,
    values: [credentialHash],
  });
  return res.rows[0] ?? null;
}

const E_COLUMNS = COLUMNS.replace(/(\w+)/g, 'e.$1');

/**
 * authenticateEndpoint and the session check of an MCP request in one round trip: the
 * live endpoint holding this credential, and whether `sessionId` is a live session of
 * it. A plain read; the last_seen_at stamps (at most once a minute, as above) follow
 * only when one is due, so almost every request costs one indexed SELECT.
 */
export async function authenticateEndpointSession(
  db: Queryable,
  credentialHash: Buffer,
  sessionId: string,
): Promise<(Endpoint & { session_live: boolean }) | null> {
  const res = await db.query<Endpoint & { session_live: boolean; session_stale: boolean; endpoint_stale: boolean }>({
    name: 'authenticate_endpoint_session',
    text: `SELECT ${E_COLUMNS}, s.id IS NOT NULL AS session_live,
        coalesce(s.last_seen_at < now() - interval '1 minute', false) AS session_stale,
        coalesce(e.last_seen_at < now() - interval '1 minute', true) AS endpoint_stale
       FROM endpoints e
       LEFT JOIN mcp_sessions s ON s.endpoint_id = e.id AND s.id = $2 AND s.closed_at IS NULL
      WHERE e.credential_hash = $1 AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now())`,
    values: [credentialHash, sessionId],
  });
  const row = res.rows[0];
  if (!row) return null;
  const { session_stale: sessionStale, endpoint_stale: endpointStale, ...found } = row;
  if (endpointStale || sessionStale) {
    await db.query({
      name: 'stamp_endpoint_session',
      text: `WITH e AS (
         UPDATE endpoints SET last_seen_at = now()
          WHERE id = $1 AND $3 AND (last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute'))
       UPDATE mcp_sessions SET last_seen_at = now()
        WHERE endpoint_id = $1 AND id = $2 AND $4 AND last_seen_at < now() - interval '1 minute'`,
      values: [found.id, sessionId, endpointStale, sessionStale],
    });
  }
  return found;
}

/**
 * Revokes an endpoint in one statement: the credential stops matching, its live todos
 * are dead-lettered (`endpoint_revoked`) with open attempts closed as revoked, its MCP
 * sessions are closed, and on commit every instance hears `endpoint_revoked` and ends
 * the streams it holds. The revocation instant is now, or the expiry for the sweep.
 */
const REVOKE = `
  WITH e AS (
    UPDATE endpoints SET revoked_at = least(now(), coalesce(expires_at, now()))
     WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}),
  dead AS (
    UPDATE todos t SET state = 'failed', error = 'endpoint_revoked', next_retry_at = NULL, ready_at = NULL,
      lease_expires_at = NULL, updated_at = now()
      FROM e WHERE t.endpoint_id = e.id
       AND (t.state IN ('pending', 'claimed') OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))
    RETURNING t.endpoint_id, t.id, t.claims),
  closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'revoked'
      FROM dead WHERE a.endpoint_id = dead.endpoint_id AND a.todo_id = dead.id AND a.seq = dead.claims
       AND a.ended_at IS NULL),
  sessions AS (
    UPDATE mcp_sessions s SET closed_at = now(), stream_open = false
      FROM e WHERE s.endpoint_id = e.id AND s.closed_at IS NULL)
  SELECT e.*, (SELECT count(*) FROM dead) AS dead_lettered,
         ${notifySql('endpoint_revoked', { endpoint_id: 'e.id' })} AS notified
    FROM e`;

export async function revokeEndpoint(
  db: Queryable,
  id: string,
): Promise<{ endpoint: Endpoint; dead_lettered: number } | null> {
  const res = await db.query<Endpoint & { dead_lettered: number; notified: unknown }>(REVOKE, [id]);
  const row = res.rows[0];
  if (!row) return null;
  const { dead_lettered, notified: _notified, ...endpoint } = row;
  return { endpoint, dead_lettered };
}

/** Endpoints past their expiry and not yet revoked (for the expiry sweep). */
export async function listExpiredEndpoints(db: Queryable, limit: number): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM endpoints WHERE revoked_at IS NULL AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return res.rows.map((r) => r.id);
}

/** Deletes a revoked endpoint of this human (todos and webhooks go with it). */
export async function deleteRevokedEndpoint(db: Queryable, humanId: string, id: string): Promise<boolean> {
  const res = await db.query('DELETE FROM endpoints WHERE human_id = $1 AND id = $2 AND revoked_at IS NOT NULL', [
    humanId,
    id,
  ]);
  return res.rowCount === 1;
}
