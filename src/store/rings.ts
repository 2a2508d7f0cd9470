// Doorbell rings: choosing which todos to ring and which session hears them, in one
// statement each, so two instances reacting to the same notice never ring a todo twice.
// A ring spends one of the todo's ring budget (ring_attempts) and stamps last_ringed_at;
// the session's last_rung_at rotates rings across the endpoint's open streams, and
// last_rung_instance names the instance it went to (re-rung if that instance dies).

import { CHANNEL, eventPayload, type BusEvents } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { ENDPOINT_PRESENT } from './presence-sql.js';

/** Only work whose sender is known rings: a human, an endpoint over MCP, or a token webhook. */
export const SENDER_VERIFIED = `(t.created_by_human_id IS NOT NULL OR t.created_by_endpoint_id IS NOT NULL
  OR t.source = 'webhook')`;

export interface RungTodo {
  id: string;
  queue: string;
  title: string;
  kind: string | null;
  source: string | null;
  session_id: string;
  instance: string;
  /** Claims of the todo when it was rung: a later attempt (seq above it) acknowledges the ring. */
  claims: number;
  /** The todo's stored trace context: the ring's span links to it (docs/design/tracing.md). */
  traceparent: string | null;
}

/** Why a todo is due a ring now. */
export type RingReason =
  /** Created or requeued since its last ring (a todo_ready notice). */
  | { kind: 'ready'; queue: string }
  /**
   * Its queue's budget admits again after holding it back (docs/design/admission.md):
   * waiting todos not rung in the last minute.
   */
  | { kind: 'reopen'; queue: string }
  /** Still pending and old enough for the next heartbeat re-ring. */
  | { kind: 'rering'; scheduleSeconds: number[] }
  /**
   * A session just opened its stream: waiting todos not rung in the last minute to another
   * session whose stream is still open.
   */
  | { kind: 'attach'; sessionId: string };

// The rows a ring pass may pick, as the partial indexes of 0012_backlog_scale.sql (as
// 0014_work_model.sql rebuilt them: a scheduled todo, ready_at NULL, is rung only once
// promoted) spell them (the literals are MAX_RINGS and the re-ring schedule's length in doorbell/pump.ts;
// the planner matches an index only on the same predicate). Over alias t.
const RINGABLE = `t.state = 'pending' AND t.ready_at IS NOT NULL AND t.ring_attempts < 6 AND NOT t.synthetic AND ${SENDER_VERIFIED}`;
export const RING_READY = `${RINGABLE} AND (t.last_ringed_at IS NULL OR t.last_ringed_at < t.updated_at)`;
/**
 * What a ring stamps as last_ringed_at: never before the version of the todo it rang.
 * now() is when the ring statement began, and its snapshot is taken a moment later (after
 * planning): a create or requeue that begins and commits in between is seen and rung, yet
 * its updated_at is after now(). Stamped now(), that ring would read as older than the
 * change it covered, and the change's own todo_ready would ring the todo again.
 */
export const RUNG_AT = 'greatest(now(), t.updated_at)';
const RERING_DUE = `t.state = 'pending' AND t.ready_at IS NOT NULL AND t.ring_attempts BETWEEN 1 AND 4 AND NOT t.synthetic AND ${SENDER_VERIFIED}`;
const NOT_RUNG_LATELY = `(t.last_ringed_at IS NULL OR t.last_ringed_at < now() - interval '1 minute')`;
/**
 * Attach: a todo rung in the last minute is skipped while the stream it was rung to
 * (`last_rung_stream`, a stream opening's `stream_id`) is still open — another session's,
 * or the attaching stream itself, which a ready pass may have picked a moment after it
 * opened. A ring to a session that has since closed, or to a stream that dropped (this
 * session's earlier one included), went nowhere anyone listens, so a session reconnecting
 * 25 s later hears it. The ring rows are not read: the writer inserts them after delivery,
 * so a ring made milliseconds ago would not be there yet (migration 0027). One session row
 * by its stream key, only for todos rung within the minute (work in flight).
 */
const NOT_RUNG_TO_A_LIVE_STREAM = `(${NOT_RUNG_LATELY} OR t.last_rung_stream IS NULL OR NOT EXISTS (
    SELECT 1 FROM mcp_sessions s
     WHERE s.endpoint_id = t.endpoint_id AND s.stream_id = t.last_rung_stream
       AND s.closed_at IS NULL AND s.stream_open))`;

/**
 * The due todos, oldest first, as one index range per queue (and per ring count for the
 * re-ring): $1 endpoint, $2 ring budget, $3 limit, $4 the reason's parameter (queue,
 * session or schedule), $5 the queues a pass over several looks at. Each range stops at
 * the limit, so a pass reads about as many rows as it rings, whatever the backlog.
 */
function dueSql(reason: RingReason): string {
  const row = `t.endpoint_id, t.id, t.created_at`;
  const tail = `AND t.ring_attempts < $2 ORDER BY t.created_at LIMIT $3 FOR UPDATE SKIP LOCKED`;
  switch (reason.kind) {
    case 'ready':
      return `SELECT ${row} FROM todos t WHERE t.endpoint_id = $1 AND t.queue = $4 AND ${RING_READY} ${tail}`;
    case 'reopen':
      return `SELECT ${row} FROM todos t
        WHERE t.endpoint_id = $1 AND t.queue = $4 AND ${RINGABLE} AND ${NOT_RUNG_LATELY} ${tail}`;
    case 'attach':
      return `SELECT c.* FROM unnest($5::text[]) q(queue) CROSS JOIN LATERAL (
        SELECT ${row} FROM todos t
         WHERE t.endpoint_id = $1 AND t.queue = q.queue AND ${RINGABLE} AND ${NOT_RUNG_TO_A_LIVE_STREAM} ${tail}) c
        ORDER BY c.created_at LIMIT $3`;
    case 'rering':
      return `SELECT c.* FROM unnest($5::text[]) q(queue)
        CROSS JOIN unnest($4::int[]) WITH ORDINALITY s(secs, k)
        CROSS JOIN LATERAL (
          SELECT ${row} FROM todos t
           WHERE t.endpoint_id = $1 AND t.queue = q.queue AND ${RERING_DUE} AND t.ring_attempts = s.k
             AND t.created_at <= now() - make_interval(secs => s.secs)
             AND t.last_ringed_at < now() - interval '1 minute' ${tail}) c
        ORDER BY c.created_at LIMIT $3`;
  }
}

function targetSql(reason: RingReason): string {
  const which = reason.kind === 'attach' ? 'AND s.id = $4' : '';
  return `SELECT s.endpoint_id, s.id, s.instance, s.stream_id FROM mcp_sessions s
     WHERE s.endpoint_id = $1 AND s.closed_at IS NULL AND s.stream_open ${which} AND ${ENDPOINT_PRESENT}
     ORDER BY s.last_rung_at NULLS FIRST, s.created_at, s.id LIMIT 1`;
}

/**
 * Claims up to `limit` due todos of one endpoint and the session to ring them: the open
 * stream rung longest ago (or the named one on attach). Nothing is spent when no session
 * has an open stream: the todo waits for ring-on-attach and stays claimable. Deferred
 * queues (docs/design/admission.md) never ring; `queues` bounds the passes over several
 * queues (attach, re-ring) and defaults to the endpoint's granted queues.
 */
export async function claimRings(
  db: Queryable,
  a: {
    endpointId: string;
    maxRings: number;
    limit: number;
    reason: RingReason;
    deferredQueues?: string[];
    queues?: string[];
  },
): Promise<RungTodo[]> {
  const deferred = a.deferredQueues ?? [];
  const reason = a.reason;
  if ((reason.kind === 'ready' || reason.kind === 'reopen') && deferred.includes(reason.queue)) return [];
  const params: unknown[] = [a.endpointId, a.maxRings, a.limit];
  if (reason.kind === 'ready' || reason.kind === 'reopen') params.push(reason.queue);
  else {
    const queues = (a.queues ?? (await grantedQueues(db, a.endpointId))).filter((q) => !deferred.includes(q));
    params.push(reason.kind === 'rering' ? reason.scheduleSeconds : reason.sessionId, queues);
  }
  const res = await db.query<RungTodo>(
    `WITH target AS (${targetSql(reason)}),
     due AS (SELECT d.* FROM (${dueSql(reason)}) d WHERE EXISTS (SELECT 1 FROM target)),
     rung AS (
       UPDATE todos t SET ring_attempts = t.ring_attempts + 1, last_ringed_at = ${RUNG_AT},
           last_rung_instance = target.instance, last_rung_stream = target.stream_id
         FROM due, target WHERE t.endpoint_id = due.endpoint_id AND t.id = due.id
       RETURNING t.id, t.queue, t.title, t.kind, t.source, t.claims, t.created_at, t.traceparent),
     touched AS (
       UPDATE mcp_sessions s SET last_rung_at = now() FROM target
        WHERE s.endpoint_id = target.endpoint_id AND s.id = target.id AND EXISTS (SELECT 1 FROM rung))
     SELECT rung.id, rung.queue, rung.title, rung.kind, rung.source, rung.claims, rung.traceparent,
            target.id AS session_id, target.instance
       FROM rung, target ORDER BY rung.created_at`,
    params,
  );
  return res.rows;
}

async function grantedQueues(db: Queryable, endpointId: string): Promise<string[]> {
  const res = await db.query<{ queues: string[] }>('SELECT queues FROM endpoints WHERE id = $1', [endpointId]);
  return res.rows[0]?.queues ?? [];
}

/**
 * Endpoints that may have work due a heartbeat re-ring: those with an open notification
 * stream (nothing is rung without one), so the sweep's cost follows live streams, never
 * the backlog; the ring statement finds each one's due todos through its index.
 */
export async function endpointsWithOpenStreams(db: Queryable): Promise<string[]> {
  const res = await db.query<{ endpoint_id: string }>(
    `SELECT DISTINCT endpoint_id FROM mcp_sessions WHERE stream_open AND closed_at IS NULL`,
  );
  return res.rows.map((r) => r.endpoint_id);
}

/** Hands a ring to the instance holding the session's stream. */
export async function publishRing(db: Queryable, payload: BusEvents['ring']): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CHANNEL, eventPayload('ring', payload)]);
}
