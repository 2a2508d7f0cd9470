// Endpoints: one logical agent each, owned by one human, with its granted queues and
// verbs and a hashed bearer credential. Reads by operators are scoped by the owning
// human; the credential lookup (for /mcp) is by hash.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { AppError } from '../domain/errors.js';
import { translatePgError } from './pg-errors.js';
import { cancelAskSql } from './asks.js';

export interface Endpoint {
  id: string;
  human_id: string;
  name: string;
  slug: string;
  queues: string[];
  verbs: string[];
  default_lease_seconds: number | null;
  /** Whether other endpoints' agents may queue messages into its sessions (send_message). */
  accept_agent_messages: boolean;
  credential_prefix: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_seen_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, human_id, name, slug, queues, verbs, default_lease_seconds, accept_agent_messages,
  credential_prefix, expires_at, revoked_at, last_seen_at, created_at`;

export interface InsertEndpointArgs {
  id: string;
  humanId: string;
  name: string;
  slug: string;
  /** The slug was asked for (vend --slug): a clash names the field `slug`. */
  slugChosen?: boolean;
  queues: string[];
  verbs: string[];
  defaultLeaseSeconds: number | null;
  acceptAgentMessages?: boolean;
  expiresAt: Date | null;
  credentialHash?: Buffer | null;
  credentialPrefix?: string | null;
}

export async function insertEndpoint(db: Queryable, a: InsertEndpointArgs): Promise<Endpoint> {
  try {
    const res = await db.query<Endpoint>(
      `INSERT INTO endpoints (id, human_id, name, slug, queues, verbs, default_lease_seconds, expires_at,
         credential_hash, credential_prefix, accept_agent_messages)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
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
        a.acceptAgentMessages ?? false,
      ],
    );
    return res.rows[0] as Endpoint;
  } catch (err) {
    // A chosen slug is the field at fault; a generated one collides only by chance.
    throw translatePgError(err, `an endpoint with slug ${a.slug} already exists`, a.slugChosen ? 'slug' : 'name');
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
 * A credential works only while its endpoint's owner is active: a disabled human's
 * endpoints authenticate as nothing, and enabling the human brings them back
 * (docs/design/people.md). One primary-key probe per lookup.
 */
export const OWNER_ACTIVE = (alias: string) =>
  `EXISTS (SELECT 1 FROM humans h WHERE h.id = ${alias}.human_id AND h.state = 'active')`;

/**
 * The live endpoint holding this credential (not revoked, not past expiry, owner active). last_seen_at
 * is stamped at most once a minute: every session of an endpoint authenticates on every
 * MCP call, and a write each time would serialise them all on this one row.
 */
export async function authenticateEndpoint(db: Queryable, credentialHash: Buffer): Promise<Endpoint | null> {
  const res = await db.query<Endpoint>({
    name: 'authenticate_endpoint',
    text: `WITH e AS (
       SELECT ${COLUMNS} FROM endpoints
        WHERE credential_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
          AND ${OWNER_ACTIVE('endpoints')}),
     touched AS (
       UPDATE endpoints SET last_seen_at = now() FROM e
        WHERE endpoints.id = e.id AND (e.last_seen_at IS NULL OR e.last_seen_at < now() - interval '1 minute'))
     SELECT * FROM e`,
    values: [credentialHash],
  });
  return res.rows[0] ?? null;
}

export const E_COLUMNS = COLUMNS.replace(/(\w+)/g, 'e.$1');

/**
 * The live endpoint whose replaced credential this is, while its grace lasts
 * (docs/design/mcp-surface.md, "Rotating a credential"), with whether `sessionId` is a
 * live session of it. Only a bearer the current credentials missed comes here, so the
 * statements every call runs stay as they are.
 */
export async function authenticatePreviousCredential(
  db: Queryable,
  credentialHash: Buffer,
  sessionId: string | null,
): Promise<(Endpoint & { session_live: boolean }) | null> {
  const res = await db.query<Endpoint & { session_live: boolean }>({
    name: 'authenticate_previous_credential',
    text: `SELECT ${E_COLUMNS}, s.id IS NOT NULL AS session_live
       FROM endpoints e
       LEFT JOIN mcp_sessions s ON s.endpoint_id = e.id AND s.id = $2 AND s.closed_at IS NULL
      WHERE e.previous_credential_hash = $1 AND e.previous_credential_expires_at > now()
        AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now()) AND ${OWNER_ACTIVE('e')}`,
    values: [credentialHash, sessionId],
  });
  return res.rows[0] ?? null;
}

/**
 * Replaces a live endpoint's credential; the one it replaces keeps working for
 * `graceSeconds` (0: not at all). Answers the endpoint and when the old one stops, or
 * null when the endpoint is not this human's or is revoked.
 */
export async function rotateCredential(
  db: Queryable,
  humanId: string,
  id: string,
  a: { credentialHash: Buffer; credentialPrefix: string; graceSeconds: number },
): Promise<(Endpoint & { previous_valid_until: Date | null }) | null> {
  // On commit every instance hears endpoint_changed and drops the answers it reuses.
  const res = await db.query<Endpoint & { previous_valid_until: Date | null }>(
    `WITH rotated AS (
       UPDATE endpoints SET previous_credential_hash = CASE WHEN $5 > 0 THEN credential_hash END,
          previous_credential_prefix = CASE WHEN $5 > 0 THEN credential_prefix END,
          previous_credential_expires_at = CASE WHEN $5 > 0 THEN now() + make_interval(secs => $5) END,
          credential_hash = $3, credential_prefix = $4
        WHERE id = $1 AND human_id = $2 AND revoked_at IS NULL
        RETURNING ${COLUMNS}, previous_credential_expires_at AS previous_valid_until)
     SELECT rotated.*, ${notifySql('endpoint_changed', { endpoint_id: 'rotated.id' })} AS notified FROM rotated`,
    [id, humanId, a.credentialHash, a.credentialPrefix, a.graceSeconds],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { notified: _notified, ...rotated } = row as typeof row & { notified?: unknown };
  return rotated;
}

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
      WHERE e.credential_hash = $1 AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now())
        AND ${OWNER_ACTIVE('e')}`,
    values: [credentialHash, sessionId],
  });
  const row = res.rows[0];
  if (!row) return null;
  const { session_stale: sessionStale, endpoint_stale: endpointStale, ...found } = row;
  await stampSeen(db, found.id, sessionId, endpointStale, sessionStale);
  return found;
}

/** The once-a-minute last_seen_at stamps of an endpoint and its session, when one is due (also OAuth's, store/oauth.ts). */
export async function stampSeen(
  db: Queryable,
  endpointId: string,
  sessionId: string | null,
  endpointStale: boolean,
  sessionStale: boolean,
): Promise<void> {
  if (!endpointStale && !sessionStale) return;
  await db.query({
    name: 'stamp_endpoint_session',
    text: `WITH e AS (
       UPDATE endpoints SET last_seen_at = now()
        WHERE id = $1 AND $3 AND (last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute'))
     UPDATE mcp_sessions SET last_seen_at = now()
      WHERE endpoint_id = $1 AND id = $2 AND $4 AND last_seen_at < now() - interval '1 minute'`,
    values: [endpointId, sessionId, endpointStale, sessionStale],
  });
}

/**
 * Revokes an endpoint in one statement: the credential stops matching, its live todos
 * are dead-lettered (`endpoint_revoked`) with open attempts closed as revoked and open
 * questions as canceled (docs/design/ask-human.md), its MCP
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
       AND (t.state IN ('pending', 'claimed', 'waiting_on_human') OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))
    RETURNING t.endpoint_id, t.id, t.claims),
  unasked AS (${cancelAskSql('dead')}),
  closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'revoked'
      FROM dead WHERE a.endpoint_id = dead.endpoint_id AND a.todo_id = dead.id AND a.seq = dead.claims
       AND a.ended_at IS NULL),
  sessions AS (
    UPDATE mcp_sessions s SET closed_at = now(), stream_open = false
      FROM e WHERE s.endpoint_id = e.id AND s.closed_at IS NULL),
  -- Its OAuth grants die with it (docs/design/oauth.md, "Revocation").
  grants AS (
    UPDATE oauth_grants g SET revoked_at = now(), revoked_reason = 'endpoint_revoked'
      FROM e WHERE g.endpoint_id = e.id AND g.revoked_at IS NULL)
  SELECT e.*, (SELECT count(*) FROM dead) AS dead_lettered,
         ${notifySql('endpoint_revoked', { endpoint_id: 'e.id' })} AS notified
    FROM e`;

export async function revokeEndpoint(
  db: Queryable,
  id: string,
): Promise<{ endpoint: Endpoint; dead_lettered: number } | null> {
  // The lock first (LIVE_ENDPOINT, store/todo-sql.ts): it waits for every insert of a todo
  // in flight on this endpoint, so REVOKE's snapshot, taken after, sees what they wrote;
  // inserts that come later wait for this transaction and then find the endpoint revoked.
  const res = await inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE', [id]);
    return tx.query<Endpoint & { dead_lettered: number; notified: unknown }>(REVOKE, [id]);
  });
  const row = res.rows[0];
  if (!row) return null;
  const { dead_lettered, notified: _notified, ...endpoint } = row;
  return { endpoint, dead_lettered };
}

/** Changes the owner's settings of a live endpoint; null when it is not theirs or is revoked. */
export async function updateEndpointSettings(
  db: Queryable,
  humanId: string,
  id: string,
  a: {
    acceptAgentMessages?: boolean | undefined;
    name?: string | undefined;
    /** null clears it (the server's default); undefined leaves it. */
    defaultLeaseSeconds?: number | null | undefined;
    /** Granted besides the current queues, in order, each once. */
    addQueues?: string[] | undefined;
    /** No longer granted; the caller has locked the row and checked none holds work. */
    removeQueues?: string[] | undefined;
    /** No change is made when the queues would number more, or none would be left (answers null). */
    maxQueues?: number;
  },
): Promise<Endpoint | null> {
  // Queues are appended to the row's own list under its row lock, so two edits adding
  // queues at once both land. On commit every instance hears endpoint_changed.
  const res = await db.query<Endpoint>(
    `WITH changed AS (
     UPDATE endpoints SET accept_agent_messages = coalesce($3, accept_agent_messages),
        name = coalesce($4, name),
        default_lease_seconds = CASE WHEN $5 THEN $6::int ELSE default_lease_seconds END,
        queues = ARRAY(SELECT q FROM unnest(queues) WITH ORDINALITY AS k(q, n) WHERE q <> ALL ($9::text[]) ORDER BY n)
              || ARRAY(SELECT q FROM unnest($7::text[]) WITH ORDINALITY AS a(q, n)
                        WHERE q <> ALL (queues) GROUP BY q ORDER BY min(n))
      WHERE id = $1 AND human_id = $2 AND revoked_at IS NULL
        AND (SELECT count(DISTINCT q) FROM unnest(queues || $7::text[]) AS u(q) WHERE q <> ALL ($9::text[])) <= $8
        AND EXISTS (SELECT 1 FROM unnest(queues || $7::text[]) AS u(q) WHERE q <> ALL ($9::text[]))
      RETURNING ${COLUMNS})
     SELECT changed.*, ${notifySql('endpoint_changed', { endpoint_id: 'changed.id' })} AS notified FROM changed`,
    [
      id,
      humanId,
      a.acceptAgentMessages ?? null,
      a.name ?? null,
      a.defaultLeaseSeconds !== undefined,
      a.defaultLeaseSeconds ?? null,
      a.addQueues ?? [],
      a.maxQueues ?? 50,
      a.removeQueues ?? [],
    ],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { notified: _notified, ...changed } = row as typeof row & { notified?: unknown };
  return changed;
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

/** The slugs of these endpoints, by id (the metrics label them; one row each). */
export async function endpointSlugs(db: Queryable, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const res = await db.query<{ id: string; slug: string }>(
    `SELECT id, slug FROM endpoints WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(res.rows.map((r) => [r.id, r.slug]));
}

/**
 * After an insert that wrote nothing: `conflict` when the endpoint stopped taking work (it
 * was revoked or expired after the caller looked it up); otherwise nothing.
 */
export async function assertTakesWork(db: Queryable, endpointId: string, queues: string[]): Promise<void> {
  const res = await db.query<{ queues: string[] }>(
    `SELECT queues FROM endpoints WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [endpointId],
  );
  const granted = res.rows[0]?.queues;
  if (!granted) {
    throw new AppError('conflict', `endpoint ${endpointId} is revoked or expired: it takes no new work`, {
      id: endpointId,
    });
  }
  // The queue was removed after the caller checked it against the endpoint it had read.
  const gone = queues.find((q) => !granted.includes(q));
  if (gone !== undefined) {
    throw new AppError('forbidden', `queue: "${gone}" is not one of this endpoint's granted queues`, {
      field: 'queue',
    });
  }
}
