// Doorbell rings: choosing which todos to ring and which session hears them, in one
// statement each, so two instances reacting to the same notice never ring a todo twice.
// A ring spends one of the todo's ring budget (ring_attempts) and stamps last_ringed_at;
// the session's last_rung_at rotates rings across the endpoint's open streams, and
// last_rung_instance names the instance it went to (re-rung if that instance dies).

import { CHANNEL } from '../db/bus.js';
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
}

/** Why a todo is due a ring now. */
export type RingReason =
  /** Created or requeued since its last ring (a todo_ready notice). */
  | { kind: 'ready'; queue: string }
  /** Its queue's budget admits again after holding it back (seed 000): waiting todos not rung in the last minute. */
  | { kind: 'reopen'; queue: string }
  /** Still pending and old enough for the next heartbeat re-ring. */
  | { kind: 'rering'; scheduleSeconds: number[] }
  /** A session just opened its stream: waiting todos not rung in the last minute. */
  | { kind: 'attach'; sessionId: string };

/** The due predicate over alias t; `p` is the placeholder of the reason's parameter. */
function dueSql(reason: RingReason, p: string): string {
  switch (reason.kind) {
    case 'ready':
      return `t.queue = ${p} AND (t.last_ringed_at IS NULL OR t.last_ringed_at < t.updated_at)`;
    case 'reopen':
      return `t.queue = ${p} AND (t.last_ringed_at IS NULL OR t.last_ringed_at < now() - interval '1 minute')`;
    case 'rering':
      return `t.ring_attempts BETWEEN 1 AND cardinality(${p}::int[])
        AND t.created_at <= now() - make_interval(secs => (${p}::int[])[t.ring_attempts])
        AND t.last_ringed_at < now() - interval '1 minute'`;
    case 'attach':
      return `(t.last_ringed_at IS NULL OR t.last_ringed_at < now() - interval '1 minute')`;
  }
}

function targetSql(reason: RingReason): string {
  const which = reason.kind === 'attach' ? 'AND s.id = $4' : '';
  return `SELECT s.endpoint_id, s.id, s.instance FROM mcp_sessions s
     WHERE s.endpoint_id = $1 AND s.closed_at IS NULL AND s.stream_open ${which} AND ${ENDPOINT_PRESENT}
     ORDER BY s.last_rung_at NULLS FIRST, s.id LIMIT 1`;
}

/**
 * Claims up to `limit` due todos of one endpoint and the session to ring them: the open
 * stream rung longest ago (or the named one on attach). Nothing is spent when no session
 * has an open stream: the todo waits for ring-on-attach and stays claimable.
 */
export async function claimRings(
  db: Queryable,
  a: { endpointId: string; maxRings: number; limit: number; reason: RingReason; deferredQueues?: string[] },
): Promise<RungTodo[]> {
  const param =
    a.reason.kind === 'ready' || a.reason.kind === 'reopen'
      ? a.reason.queue
      : a.reason.kind === 'rering'
        ? a.reason.scheduleSeconds
        : a.reason.sessionId;
  const res = await db.query<RungTodo>(
    `WITH target AS (${targetSql(a.reason)}),
     due AS (
       SELECT t.endpoint_id, t.id FROM todos t
        WHERE t.endpoint_id = $1 AND t.state = 'pending' AND t.ring_attempts < $2 AND NOT t.synthetic
          AND ${SENDER_VERIFIED} AND ${dueSql(a.reason, '$4')} AND EXISTS (SELECT 1 FROM target)
          AND t.queue <> ALL($5::text[])
        ORDER BY t.created_at LIMIT $3 FOR UPDATE SKIP LOCKED),
     rung AS (
       UPDATE todos t SET ring_attempts = t.ring_attempts + 1, last_ringed_at = now(),
           last_rung_instance = target.instance
         FROM due, target WHERE t.endpoint_id = due.endpoint_id AND t.id = due.id
       RETURNING t.id, t.queue, t.title, t.kind, t.source, t.claims, t.created_at),
     touched AS (
       UPDATE mcp_sessions s SET last_rung_at = now() FROM target
        WHERE s.endpoint_id = target.endpoint_id AND s.id = target.id AND EXISTS (SELECT 1 FROM rung))
     SELECT rung.id, rung.queue, rung.title, rung.kind, rung.source, rung.claims, target.id AS session_id,
            target.instance
       FROM rung, target ORDER BY rung.created_at`,
    [a.endpointId, a.maxRings, a.limit, param, a.deferredQueues ?? []],
  );
  return res.rows;
}

/** Endpoints with pending todos due a heartbeat re-ring (for the re-ring sweep). */
export async function endpointsDueReRing(
  db: Queryable,
  scheduleSeconds: number[],
  maxRings: number,
): Promise<string[]> {
  const res = await db.query<{ endpoint_id: string }>(
    `SELECT DISTINCT t.endpoint_id FROM todos t
      WHERE t.state = 'pending' AND t.ring_attempts < $2 AND NOT t.synthetic AND ${SENDER_VERIFIED}
        AND ${dueSql({ kind: 'rering', scheduleSeconds }, '$1')}
        AND t.created_at <= now() - make_interval(secs => ($1::int[])[1])
      LIMIT 500`,
    [scheduleSeconds, maxRings],
  );
  return res.rows.map((r) => r.endpoint_id);
}

/** Hands a ring to the instance holding the session's stream. */
export async function publishRing(db: Queryable, payload: Record<string, unknown>): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ type: 'ring', ...payload })]);
}
