// Delivery statements of the session message queue: reserve the head, return a
// reservation to pending, acknowledge (delete) it, and what the redelivery sweep looks
// for. Reserve runs under the session's lock row (see store/messages.ts) like remove and
// clear; release is guarded by the reservation it releases (same generation, same
// delivery attempt), so a late or repeated release never touches a newer reservation or a
// purged session.

import type { Queryable } from '../db/pool.js';
import { messageColumnsOf, type QueuedMessage, type SessionRef } from './messages.js';

/**
 * Marks the session's head pending row in flight, unless a row is in flight already
 * (messages go one at a time: the next only after the previous one's ack or return).
 */
export async function reserveHead(tx: Queryable, s: SessionRef): Promise<QueuedMessage | null> {
  const res = await tx.query<QueuedMessage>(
    `WITH head AS (
       SELECT endpoint_id, id FROM queued_messages
        WHERE endpoint_id = $1 AND session_id = $2 AND NOT reserved_in_flight
          AND NOT EXISTS (SELECT 1 FROM queued_messages
                           WHERE endpoint_id = $1 AND session_id = $2 AND reserved_in_flight)
        ORDER BY position, queued_at LIMIT 1)
     UPDATE queued_messages m SET reserved_in_flight = true, reserved_at = clock_timestamp(),
         delivery_attempts = m.delivery_attempts + 1
       FROM head WHERE m.endpoint_id = head.endpoint_id AND m.id = head.id
     RETURNING ${messageColumnsOf('m')}`,
    [s.endpointId, s.sessionId],
  );
  return res.rows[0] ?? null;
}

/**
 * Whether the session's stream is open on that instance and its client declared
 * claude/channel, so a pushed message can be shown (a cheap pre-check before locking).
 */
export async function streamHeldBy(db: Queryable, s: SessionRef, instance: string): Promise<boolean> {
  const res = await db.query(
    `SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL AND stream_open
        AND channel AND instance = $3`,
    [s.endpointId, s.sessionId, instance],
  );
  return res.rowCount === 1;
}

/** Whether another instance now holds the session's open stream (it moved there). */
export async function streamHeldElsewhere(db: Queryable, s: SessionRef, instance: string): Promise<boolean> {
  const res = await db.query(
    `SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1 AND id = $2 AND stream_open AND instance <> $3`,
    [s.endpointId, s.sessionId, instance],
  );
  return res.rowCount === 1;
}

export interface Reservation {
  endpointId: string;
  sessionId: string;
  id: string;
  generation: number;
  /** delivery_attempts as this reservation set it: names the reservation. */
  attempt: number;
}

/**
 * Returns one reservation to pending at its own position, only if it is still that
 * reservation in that generation; false when it was acknowledged, purged or reserved
 * anew (the retry is discarded).
 */
export async function releaseReservation(tx: Queryable, r: Reservation): Promise<boolean> {
  const res = await tx.query(
    `UPDATE queued_messages m SET reserved_in_flight = false, reserved_at = NULL
       FROM queue_session_locks l
      WHERE m.endpoint_id = $1 AND m.session_id = $2 AND m.id = $3::uuid AND m.reserved_in_flight
        AND m.generation = $4 AND m.delivery_attempts = $5
        AND l.endpoint_id = m.endpoint_id AND l.session_id = m.session_id AND l.generation = $4`,
    [r.endpointId, r.sessionId, r.id, r.generation, r.attempt],
  );
  return res.rowCount === 1;
}

/** Returns every in-flight row of the session to pending (its stream closed or reopened). */
export async function releaseSession(tx: Queryable, s: SessionRef): Promise<number> {
  const res = await tx.query(
    `UPDATE queued_messages SET reserved_in_flight = false, reserved_at = NULL
      WHERE endpoint_id = $1 AND session_id = $2 AND reserved_in_flight`,
    [s.endpointId, s.sessionId],
  );
  return res.rowCount ?? 0;
}

/** The acknowledgement: deletes the caller's in-flight row; false when none matched. */
export async function ackReserved(db: Queryable, s: SessionRef, id: string): Promise<boolean> {
  const res = await db.query(
    `DELETE FROM queued_messages WHERE endpoint_id = $1 AND session_id = $2 AND id = $3::uuid AND reserved_in_flight`,
    [s.endpointId, s.sessionId, id],
  );
  return res.rowCount === 1;
}

/** Reservations older than the ack timeout, oldest first. */
export async function expiredReservations(db: Queryable, timeoutMs: number, limit: number): Promise<Reservation[]> {
  const res = await db.query<{
    endpoint_id: string;
    session_id: string;
    id: string;
    generation: number;
    delivery_attempts: number;
  }>(
    `SELECT endpoint_id, session_id, id::text AS id, generation, delivery_attempts FROM queued_messages
      WHERE reserved_in_flight AND reserved_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)
      ORDER BY reserved_at LIMIT $2`,
    [timeoutMs, limit],
  );
  return res.rows.map((r) => ({
    endpointId: r.endpoint_id,
    sessionId: r.session_id,
    id: r.id,
    generation: r.generation,
    attempt: r.delivery_attempts,
  }));
}

/**
 * Sessions with an open stream (that declared claude/channel), pending messages and nothing in flight: what a lost
 * notice would leave waiting. The sweep nudges each once per tick.
 */
export async function sessionsWaiting(db: Queryable, limit: number): Promise<SessionRef[]> {
  const res = await db.query<{ endpoint_id: string; session_id: string }>(
    `SELECT DISTINCT m.endpoint_id, m.session_id FROM queued_messages m
       JOIN mcp_sessions s ON s.endpoint_id = m.endpoint_id AND s.id = m.session_id
      WHERE s.stream_open AND s.channel AND s.closed_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM queued_messages r
                         WHERE r.endpoint_id = m.endpoint_id AND r.session_id = m.session_id AND r.reserved_in_flight)
      LIMIT $1`,
    [limit],
  );
  return res.rows.map((r) => ({ endpointId: r.endpoint_id, sessionId: r.session_id }));
}
