// Doorbell rings: choosing which todos to ring and which session hears them, in one
// statement each, so two instances reacting to the same notice never ring a todo twice.
// A ring spends one of the todo's ring budget (ring_attempts) and stamps last_ringed_at;
// the session's last_rung_at rotates rings across the endpoint's open streams, and
// last_rung_instance names the instance it went to (re-rung if that instance dies).

import { CHANNEL, eventPayload, type BusEvents } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { prepared } from '../db/prepared.js';
import { LISTENING, NO_CLAIM_IN_FLIGHT, NO_RING_UNANSWERED } from './ring-targets.js';

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
   * Work due a ring on any granted queue (never rung, or changed since), for sessions that
   * are idle now: all of them (the heartbeat sweep), or the one that settled a claim.
   */
  | { kind: 'waiting'; sessionId?: string }
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

/** Numbered parameters, bound as the statement text asks for them. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

interface DueArgs {
  endpoint: string;
  maxRings: string;
  /** How many to take: an SQL expression (the number of sessions to ring, or a limit). */
  limit: string;
  /** The reason's queue (ready, reopen) or schedule (rering). */
  param: string;
  /** The queues a pass over several looks at. */
  queues: string;
}

/**
 * The due todos, oldest first, as one index range per queue (and per ring count for the
 * re-ring). Each range stops at the limit, so a pass reads about as many rows as it rings,
 * whatever the backlog.
 */
function dueSql(reason: RingReason, p: DueArgs): string {
  const row = `t.endpoint_id, t.id, t.created_at`;
  const tail = `AND t.ring_attempts < ${p.maxRings} ORDER BY t.created_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED`;
  const perQueue = (where: string) => `SELECT c.* FROM unnest(${p.queues}::text[]) q(queue) CROSS JOIN LATERAL (
        SELECT ${row} FROM todos t WHERE t.endpoint_id = ${p.endpoint} AND t.queue = q.queue AND ${where} ${tail}) c
        ORDER BY c.created_at LIMIT ${p.limit}`;
  switch (reason.kind) {
    case 'ready':
      return `SELECT ${row} FROM todos t WHERE t.endpoint_id = ${p.endpoint} AND t.queue = ${p.param} AND ${RING_READY} ${tail}`;
    case 'reopen':
      return `SELECT ${row} FROM todos t
        WHERE t.endpoint_id = ${p.endpoint} AND t.queue = ${p.param} AND ${RINGABLE} AND ${NOT_RUNG_LATELY} ${tail}`;
    case 'waiting':
      return perQueue(RING_READY);
    case 'attach':
      return perQueue(`${RINGABLE} AND ${NOT_RUNG_TO_A_LIVE_STREAM}`);
    case 'rering':
      return `SELECT c.* FROM unnest(${p.queues}::text[]) q(queue)
        CROSS JOIN unnest(${p.param}::int[]) WITH ORDINALITY s(secs, k)
        CROSS JOIN LATERAL (
          SELECT ${row} FROM todos t
           WHERE t.endpoint_id = ${p.endpoint} AND t.queue = q.queue AND ${RERING_DUE} AND t.ring_attempts = s.k
             AND t.created_at <= now() - make_interval(secs => s.secs)
             AND t.last_ringed_at < now() - interval '1 minute' ${tail}) c
        ORDER BY c.created_at LIMIT ${p.limit}`;
  }
}

/** What a ring spends and stamps on the todo, and what it stamps on the session it rings. */
const RUNG = (from: string) => `rung AS (
       UPDATE todos t SET ring_attempts = t.ring_attempts + 1, last_ringed_at = ${RUNG_AT},
           last_rung_instance = p.instance, last_rung_stream = p.stream_id
         FROM ${from} p WHERE t.endpoint_id = p.endpoint_id AND t.id = p.id
       RETURNING t.endpoint_id, t.id, t.queue, t.title, t.kind, t.source, t.claims, t.created_at, t.traceparent,
                 p.session_id, p.instance),
     touched AS (
       UPDATE mcp_sessions s SET last_rung_at = now(), ring_todo_id = rung.id, ring_claims = rung.claims
         FROM rung WHERE s.endpoint_id = rung.endpoint_id AND s.id = rung.session_id)
     SELECT id, queue, title, kind, source, claims, traceparent, session_id, instance FROM rung ORDER BY created_at`;

/**
 * Ring-on-attach: the named session, if it listens, for up to `limit` waiting todos (it
 * may be busy: a stream that reopens mid-work hears what went to nobody).
 */
function attachSql(sessionId: string, p: Params, due: Omit<DueArgs, 'param'>): string {
  return `WITH target AS (
       SELECT s.endpoint_id, s.id, s.instance, s.stream_id FROM mcp_sessions s
        WHERE s.endpoint_id = ${due.endpoint} AND s.id = ${p.add(sessionId)} AND ${LISTENING}),
     due AS (SELECT d.* FROM (${dueSql({ kind: 'attach', sessionId }, { ...due, param: '' })}) d
              WHERE EXISTS (SELECT 1 FROM target)),
     paired AS (SELECT due.endpoint_id, due.id, target.id AS session_id, target.instance, target.stream_id FROM due, target),
     ${RUNG('paired')}`;
}

/**
 * Every other pass: the idle listening sessions (rung longest ago first, at most `limit`)
 * paired one to one with the oldest due todos. No idle session: the todos stay due, nothing
 * is spent. Two passes never ring one session twice: each locks the idle sessions it read
 * (all of them, in id order, so two passes never deadlock; an endpoint has at most its
 * session cap), and a pass that waited on a lock re-checks the row as the other pass left
 * it — rung now, so not idle (NO_RING_UNANSWERED) — and passes it by. One statement, no
 * transaction: the ring is one round trip (docs/design/doorbell-acknowledgement.md,
 * "Who is rung").
 */
function pairedSql(reason: RingReason, p: Params, due: DueArgs, windowSeconds: number): string {
  const only =
    reason.kind === 'waiting' && reason.sessionId !== undefined ? `AND s.id = ${p.add(reason.sessionId)}` : '';
  // The re-ring is for rings that went unanswered (a ring is a lossy hint): it skips only a
  // session rung in the last minute, as it skips a todo rung in the last minute.
  const answered =
    reason.kind === 'rering'
      ? `(s.last_rung_at IS NULL OR s.last_rung_at < now() - interval '1 minute')`
      : NO_RING_UNANSWERED(`${p.add(windowSeconds)}::float8`);
  return `WITH idle AS MATERIALIZED (
       SELECT s.endpoint_id, s.id, s.instance, s.stream_id, s.last_rung_at, s.created_at FROM mcp_sessions s
        WHERE s.endpoint_id = ${due.endpoint} ${only} AND ${LISTENING} AND ${NO_CLAIM_IN_FLIGHT(due.endpoint)}
          AND ${answered}
        ORDER BY s.id FOR NO KEY UPDATE OF s),
     target AS (
       SELECT i.*, row_number() OVER (ORDER BY i.last_rung_at NULLS FIRST, i.created_at, i.id) AS n
         FROM idle i ORDER BY n LIMIT ${due.limit}),
     due AS (SELECT d.*, row_number() OVER (ORDER BY d.created_at) AS n
               FROM (${dueSql(reason, { ...due, limit: '(SELECT count(*) FROM target)' })}) d),
     paired AS (SELECT due.endpoint_id, due.id, target.id AS session_id, target.instance, target.stream_id FROM due JOIN target ON target.n = due.n),
     ${RUNG('paired')}`;
}

/** The ack window when the caller names none: the default of SWITCHBOARD_DOORBELL_ACK_WINDOW. */
const DEFAULT_ACK_WINDOW_SECONDS = 900;

/**
 * Claims due todos of one endpoint and the sessions to ring them, one todo per idle
 * listening session (at most `limit`), or up to `limit` todos for the session that attached.
 * Nothing is spent when no session may be rung: the todo stays due for the next pass
 * (new work, a settled claim, the heartbeat sweep, an attach) and stays claimable.
 * Deferred queues (docs/design/admission.md) never ring; `queues` bounds the passes over
 * several queues and defaults to the endpoint's granted queues.
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
    /** SWITCHBOARD_DOORBELL_ACK_WINDOW: how long a ring stays unanswered. */
    ackWindowSeconds?: number;
  },
): Promise<RungTodo[]> {
  const deferred = a.deferredQueues ?? [];
  const reason = a.reason;
  const single = reason.kind === 'ready' || reason.kind === 'reopen';
  if (single && deferred.includes(reason.queue)) return [];
  const p = new Params();
  const due = { endpoint: p.add(a.endpointId), maxRings: p.add(a.maxRings), limit: p.add(a.limit) };
  let param = '';
  let queues = '';
  if (single) param = p.add(reason.queue);
  else {
    const granted = (a.queues ?? (await grantedQueues(db, a.endpointId))).filter((q) => !deferred.includes(q));
    queues = p.add(granted);
    if (reason.kind === 'rering') param = p.add(reason.scheduleSeconds);
  }
  const text =
    reason.kind === 'attach'
      ? attachSql(reason.sessionId, p, { ...due, queues })
      : pairedSql(reason, p, { ...due, param, queues }, a.ackWindowSeconds ?? DEFAULT_ACK_WINDOW_SECONDS);
  const res = await db.query<RungTodo>(prepared(text, p.values));
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
