// MCP sessions (mcp_sessions): the registry that lets any instance serve any live
// session. Every statement names the caller's endpoint, so a session id of another
// endpoint is never found. Closing is a mark (closed_at), not a delete, so the board
// and the operator API can still show recent sessions.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { closeAttemptSql } from './todo-sql.js';

export interface McpSession {
  endpoint_id: string;
  id: string;
  client_name: string | null;
  client_version: string | null;
  instance: string;
  stream_open: boolean;
  last_seen_at: Date;
  unheard: boolean;
  /** Its initialize declared the claude/channel capability: the doorbell rings it. */
  channel: boolean;
  /**
   * A notification stream was open at some time (its `stream_id` was minted). Without a
   * stream now, one that had it dropped it; one that never had it pulls its work.
   */
  had_stream: boolean;
  created_at: Date;
  closed_at: Date | null;
}

const COLUMNS = `endpoint_id, id, client_name, client_version, instance, stream_open, last_seen_at, unheard,
  channel, stream_id IS NOT NULL AS had_stream, created_at, closed_at`;

export interface InsertSessionArgs {
  endpointId: string;
  id: string;
  clientName: string | null;
  clientVersion: string | null;
  instance: string;
  /** It declared the claude/channel capability (0033_session_channel.sql); insertSession's default: yes. */
  channel?: boolean;
}

export async function insertSession(db: Queryable, a: InsertSessionArgs): Promise<McpSession> {
  const res = await db.query<McpSession>(
    `INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance, channel)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [a.endpointId, a.id, a.clientName, a.clientVersion, a.instance, a.channel ?? true],
  );
  return res.rows[0] as McpSession;
}

/**
 * Inserts the session unless its endpoint already has `max` live ones, on any instance:
 * one call of open_mcp_session (migrations/0021_mcp_session_cap.sql, 0033, 0034), which
 * counts and inserts under the endpoint's advisory lock, so concurrent opens count one
 * after another. At the cap it closes the endpoint's session idle longest that holds no
 * stream, no wait and no claim, and takes its slot (`evicted`, told to every instance as
 * `session_closed` on commit); it refuses only when every live session is busy. `live`
 * is the endpoint's live sessions after the call (at most `max`).
 */
export async function insertSessionUnderCap(
  db: Queryable,
  a: InsertSessionArgs & { max: number },
): Promise<{ opened: boolean; live: number; evicted: string | null }> {
  const res = await db.query<{ live_count: number; opened: boolean; evicted: string | null }>(
    `SELECT o.live_count, o.opened, o.evicted,
            CASE WHEN o.evicted IS NOT NULL
              THEN ${notifySql('session_closed', { endpoint_id: '$1::text', session_id: 'o.evicted' })} END AS notified
       FROM open_mcp_session($1, $2, $3, $4, $5, $6::int, $7) o`,
    [a.endpointId, a.id, a.clientName, a.clientVersion, a.instance, a.max, a.channel ?? false],
  );
  const row = res.rows[0];
  return { opened: row?.opened ?? false, live: row?.live_count ?? 0, evicted: row?.evicted ?? null };
}

/**
 * Records that a call of the session has begun to wait (claim_next / next_message with
 * wait_seconds) until `seconds` from now: an initialize at the cap does not evict a
 * session whose wait is ahead (0034_session_eviction.sql says why it is never cleared).
 * One primary-key update per waiting call; a later deadline only moves it forward.
 */
export async function markWaiting(
  db: Queryable,
  a: { endpointId: string; id: string; seconds: number },
): Promise<void> {
  await db.query(
    `UPDATE mcp_sessions SET waiting_until = now() + make_interval(secs => $3)
      WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL
        AND (waiting_until IS NULL OR waiting_until < now() + make_interval(secs => $3))`,
    [a.endpointId, a.id, a.seconds],
  );
}

/**
 * Deletes a session nobody was ever told of: the row written for an initialize the MCP
 * SDK then refused (a wrong Accept or Content-Type), so it holds no slot of the cap.
 */
export async function discardSession(db: Queryable, endpointId: string, id: string): Promise<void> {
  await db.query(`DELETE FROM mcp_sessions WHERE endpoint_id = $1 AND id = $2`, [endpointId, id]);
}

/**
 * Records whether a notification stream is open, and on which instance. Each opening gets
 * a fresh `stream_id`: rings name the stream they went to (store/rings.ts, attach).
 */
export async function setStreamOpen(
  db: Queryable,
  a: { endpointId: string; id: string; instance: string; open: boolean; ifFree?: boolean },
): Promise<void> {
  await db.query(
    `UPDATE mcp_sessions SET stream_open = $3, instance = CASE WHEN $3 THEN $4 ELSE instance END,
        stream_id = CASE WHEN $3 THEN gen_random_uuid()::text ELSE stream_id END, last_seen_at = now()
      WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL
        AND ($3 OR instance = $4)
        AND NOT ($5 AND stream_open AND instance <> $4)`,
    [a.endpointId, a.id, a.open, a.instance, a.ifFree === true],
  );
}

/**
 * Releases every todo the sessions in CTE `src` (endpoint_id, id) hold, as the `release`
 * verb does (store/claims.ts): pending, owner cleared, attempt kept, `ready_at` now, the
 * open attempt closed as `released`, and one todo_ready per (endpoint, queue) so the
 * doorbell rings another session. Reads the endpoint's claimed rows through
 * todos_claimed_idx, so it costs the claims in flight, never the backlog
 * (docs/design/scale.md). CTE names: `rel`, `rel_closed`, `rel_ready`.
 */
export function releaseClaimsOfSql(src: string): string {
  return `rel AS (
       UPDATE todos t SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL,
         ready_at = now(), updated_at = now()
         FROM ${src} WHERE t.endpoint_id = ${src}.endpoint_id AND t.state = 'claimed'
          AND t.owner_session_id = ${src}.id AND NOT t.synthetic
       RETURNING t.endpoint_id, t.id, t.claims, t.queue, t.claimed_under_policy),
     rel_closed AS (${closeAttemptSql('rel', 'released')}),
     rel_ready AS (
       SELECT ${notifySql('todo_ready', { endpoint_id: 'q.endpoint_id', queue: 'q.queue' })}
         FROM (SELECT DISTINCT endpoint_id, queue FROM rel) q)`;
}

/** A closed session, with what closing it released. */
export type ClosedSession = McpSession & {
  /** How many claims of the session went back to pending. */
  released: number;
  /** The queues of released claims a budget had admitted: each may owe a reopen. */
  policy_queues: string[];
};

/**
 * Closes a live session; null when it was unknown, foreign or already closed. In the
 * same statement its claims are released (releaseClaimsOfSql). On commit every instance
 * hears `session_closed`, and the one holding its stream ends it.
 */
export async function closeSession(db: Queryable, endpointId: string, id: string): Promise<ClosedSession | null> {
  const res = await db.query<ClosedSession & { notified?: unknown; ready?: unknown }>(
    `WITH r AS (
       UPDATE mcp_sessions SET closed_at = now(), stream_open = false
        WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL RETURNING ${COLUMNS}),
     ${releaseClaimsOfSql('r')}
     SELECT r.*, ${notifySql('session_closed', { endpoint_id: 'r.endpoint_id', session_id: 'r.id' })} AS notified,
            (SELECT count(*) FROM rel)::int AS released,
            (SELECT coalesce(array_agg(DISTINCT queue), '{}') FROM rel WHERE claimed_under_policy) AS policy_queues,
            (SELECT count(*) FROM rel_ready) AS ready
       FROM r`,
    [endpointId, id],
  );
  const row = res.rows[0];
  if (!row) return null;
  delete row.notified;
  delete row.ready;
  return row;
}

/** The endpoint's live sessions, oldest first. */
export async function listLiveSessions(db: Queryable, endpointId: string): Promise<McpSession[]> {
  const res = await db.query<McpSession>(
    `SELECT ${COLUMNS} FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL ORDER BY created_at, id`,
    [endpointId],
  );
  return res.rows;
}

/** What one pass of closeIdleSessions closed. */
export interface IdleClosed {
  closed: number;
  /** Of those, closed by the streamless rule before the idle one would have. */
  early: number;
  released: number;
}

/**
 * Closes the sessions with no open stream that are idle (docs/design/mcp-surface.md,
 * "Ending a session"): after `streamlessSeconds` when the session holds no claim and no
 * wait is in progress (waiting_until), else after `idleSeconds`. Reads them through
 * mcp_sessions_idle_idx (0034); the claim check reads todos_claimed_idx. Releases their
 * claims in the same statement (releaseClaimsOfSql) and tells every instance to drop
 * their transports. A budget a released claim held is reopened by its 30 s sweep.
 */
export async function closeIdleSessions(
  db: Queryable,
  a: { idleSeconds: number; streamlessSeconds: number; limit: number },
): Promise<IdleClosed> {
  const res = await db.query<IdleClosed>(
    `WITH idle AS (
       SELECT s.endpoint_id, s.id, s.last_seen_at >= now() - make_interval(secs => $1) AS early
         FROM mcp_sessions s
        WHERE s.closed_at IS NULL AND NOT s.stream_open
          AND s.last_seen_at < now() - make_interval(secs => least($1, $2))
          AND (s.last_seen_at < now() - make_interval(secs => $1)
               OR ((s.waiting_until IS NULL OR s.waiting_until <= now())
                   AND NOT EXISTS (SELECT 1 FROM todos t WHERE t.endpoint_id = s.endpoint_id
                                      AND t.state = 'claimed' AND t.owner_session_id = s.id)))
        LIMIT $3 FOR UPDATE OF s SKIP LOCKED),
     closed AS (
       UPDATE mcp_sessions s SET closed_at = now() FROM idle
        WHERE s.endpoint_id = idle.endpoint_id AND s.id = idle.id RETURNING s.endpoint_id, s.id, idle.early),
     ${releaseClaimsOfSql('closed')},
     notified AS (
       SELECT ${notifySql('session_closed', { endpoint_id: 'endpoint_id', session_id: 'id' })} FROM closed)
     SELECT (SELECT count(*) FROM notified)::int AS closed, (SELECT count(*) FROM closed WHERE early)::int AS early,
            (SELECT count(*) FROM rel)::int AS released, (SELECT count(*) FROM rel_ready) AS ready`,
    [a.idleSeconds, a.streamlessSeconds, a.limit],
  );
  const row = res.rows[0];
  return { closed: row?.closed ?? 0, early: row?.early ?? 0, released: row?.released ?? 0 };
}
