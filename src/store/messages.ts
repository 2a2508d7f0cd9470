// Session message queue rows (queued_messages) and the per-session lock row
// (queue_session_locks). Every statement names the session's endpoint and session id,
// so an entry id from another session never matches. Mutations that race each other
// (add, edit, remove, clear, reorder, reserve) run inside a transaction that first takes
// the session's lock row FOR UPDATE, and their predicates are the persisted compare
// guards (`NOT reserved_in_flight`): whichever operation wins does so completely.

import { CHANNEL, eventPayload } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import type { QueuedBy } from '../domain/messages.js';

export interface QueuedMessage {
  endpoint_id: string;
  id: string;
  session_id: string;
  position: number;
  content: string;
  queued_by: QueuedBy;
  sender_id: string | null;
  queued_at: Date;
  metadata: Record<string, unknown>;
  reserved_in_flight: boolean;
  reserved_at: Date | null;
  delivery_attempts: number;
  generation: number;
}

const NAMES = `endpoint_id session_id position content queued_by sender_id queued_at metadata reserved_in_flight
  reserved_at delivery_attempts generation`.split(/\s+/);

/** The row's columns for a select list, qualified by `alias` when given; the uuid id as text. */
export function messageColumnsOf(alias = ''): string {
  const p = alias ? `${alias}.` : '';
  return [`${p}id::text AS id`, ...NAMES.map((n) => `${p}${n}`)].join(', ');
}

const MESSAGE_COLUMNS = messageColumnsOf();

export interface SessionRef {
  endpointId: string;
  sessionId: string;
}

/**
 * A live session of a live endpoint owned by this human, by session id alone, with what
 * its endpoint accepts from other agents (docs/design/message-queue.md, "Agent
 * messages"); null when unknown, closed, revoked or another human's (no oracle: all
 * answer the same).
 */
export async function findOwnedSession(
  db: Queryable,
  humanId: string,
  sessionId: string,
): Promise<(SessionRef & { acceptAgentMessages: boolean }) | null> {
  const res = await db.query<{ endpoint_id: string; accept_agent_messages: boolean }>(
    `SELECT s.endpoint_id, e.accept_agent_messages FROM mcp_sessions s JOIN endpoints e ON e.id = s.endpoint_id
      WHERE s.id = $1 AND s.closed_at IS NULL AND e.human_id = $2 AND e.revoked_at IS NULL
        AND (e.expires_at IS NULL OR e.expires_at > now())`,
    [sessionId, humanId],
  );
  const row = res.rows[0];
  return row ? { endpointId: row.endpoint_id, sessionId, acceptAgentMessages: row.accept_agent_messages } : null;
}

const LOCK = `SELECT generation FROM queue_session_locks WHERE endpoint_id = $1 AND session_id = $2 FOR UPDATE`;

/**
 * Takes the session's lock row (creating it on first use) and then checks, in a fresh
 * statement, that the session is still live — and, with `streamOn`, that its stream is
 * open on that instance. The purge updates the same lock row, so once this returns a
 * generation, no purge can slip in before the transaction ends. Null: not live.
 */
export async function lockSession(
  tx: Queryable,
  s: SessionRef,
  streamOn?: string,
): Promise<{ generation: number } | null> {
  let lock = await tx.query<{ generation: number }>(LOCK, [s.endpointId, s.sessionId]);
  if (lock.rowCount === 0) {
    await tx.query(
      `INSERT INTO queue_session_locks (endpoint_id, session_id)
       SELECT endpoint_id, id FROM mcp_sessions WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL
       ON CONFLICT DO NOTHING`,
      [s.endpointId, s.sessionId],
    );
    lock = await tx.query<{ generation: number }>(LOCK, [s.endpointId, s.sessionId]);
  }
  const generation = lock.rows[0]?.generation;
  if (generation === undefined) return null;
  const live = await tx.query(
    `SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1 AND id = $2 AND closed_at IS NULL
        AND ($3::text IS NULL OR (stream_open AND channel AND instance = $3))`,
    [s.endpointId, s.sessionId, streamOn ?? null],
  );
  return live.rowCount === 1 ? { generation } : null;
}

/**
 * Tells every instance the session's queue changed (status for subscribers) and, unless
 * `deliver` is false, that it may have work for the instance holding its stream.
 */
export async function notifyQueue(tx: Queryable, s: SessionRef, deliver = true): Promise<void> {
  const event = { endpoint_id: s.endpointId, session_id: s.sessionId };
  await tx.query('SELECT pg_notify($1, $2)', [
    CHANNEL,
    eventPayload('message_ready', deliver ? event : { ...event, deliver }),
  ]);
}

/** Persisted rows of the session, and how many of them are in flight. */
export async function countMessages(tx: Queryable, s: SessionRef): Promise<{ total: number; reserved: number }> {
  const res = await tx.query<{ total: number; reserved: number }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE reserved_in_flight) AS reserved
       FROM queued_messages WHERE endpoint_id = $1 AND session_id = $2`,
    [s.endpointId, s.sessionId],
  );
  return res.rows[0] ?? { total: 0, reserved: 0 };
}

export interface InsertMessageArgs {
  id: string;
  content: string;
  queuedBy: QueuedBy;
  senderId: string | null;
  generation: number;
  metadata?: Record<string, unknown>;
}

/** Appends at the tail (the caller holds the lock row, so positions never collide). */
export async function insertMessage(tx: Queryable, s: SessionRef, a: InsertMessageArgs): Promise<QueuedMessage> {
  const res = await tx.query<QueuedMessage>(
    `INSERT INTO queued_messages (endpoint_id, id, session_id, position, content, queued_by, sender_id, metadata,
       generation)
     SELECT $1, $3::uuid, $2,
       coalesce((SELECT max(position) FROM queued_messages WHERE endpoint_id = $1 AND session_id = $2), 0) + 1,
       $4, $5, $6, $7, $8
     RETURNING ${MESSAGE_COLUMNS}`,
    [s.endpointId, s.sessionId, a.id, a.content, a.queuedBy, a.senderId, a.metadata ?? {}, a.generation],
  );
  return res.rows[0] as QueuedMessage;
}

/** Edits a pending row's content, only for the same provenance and the same sender. */
export async function editContent(
  tx: Queryable,
  s: SessionRef,
  a: { id: string; content: string; queuedBy: QueuedBy; senderId: string },
): Promise<QueuedMessage | null> {
  const res = await tx.query<QueuedMessage>(
    `UPDATE queued_messages SET content = $4
      WHERE endpoint_id = $1 AND session_id = $2 AND id = $3::uuid AND NOT reserved_in_flight
        AND queued_by = $5 AND sender_id = $6
      RETURNING ${MESSAGE_COLUMNS}`,
    [s.endpointId, s.sessionId, a.id, a.content, a.queuedBy, a.senderId],
  );
  return res.rows[0] ?? null;
}

/** Deletes one visible pending row of any provenance; false when none matched. */
export async function deletePending(tx: Queryable, s: SessionRef, id: string): Promise<boolean> {
  const res = await tx.query(
    `DELETE FROM queued_messages
      WHERE endpoint_id = $1 AND session_id = $2 AND id = $3::uuid AND NOT reserved_in_flight`,
    [s.endpointId, s.sessionId, id],
  );
  return res.rowCount === 1;
}

/** Clear all: every visible pending row; in-flight rows stay. The ids removed. */
export async function deleteAllPending(tx: Queryable, s: SessionRef): Promise<string[]> {
  const res = await tx.query<{ id: string }>(
    `DELETE FROM queued_messages WHERE endpoint_id = $1 AND session_id = $2 AND NOT reserved_in_flight
     RETURNING id::text AS id`,
    [s.endpointId, s.sessionId],
  );
  return res.rows.map((r) => r.id);
}

/** The session's visible (pending) rows in FIFO order. */
export async function listPending(db: Queryable, s: SessionRef): Promise<QueuedMessage[]> {
  const res = await db.query<QueuedMessage>(
    `SELECT ${MESSAGE_COLUMNS} FROM queued_messages
      WHERE endpoint_id = $1 AND session_id = $2 AND NOT reserved_in_flight ORDER BY position, queued_at`,
    [s.endpointId, s.sessionId],
  );
  return res.rows;
}

/** Gives each named row its position (the caller checked they are the visible rows). */
export async function setPositions(tx: Queryable, s: SessionRef, ids: string[], positions: number[]): Promise<void> {
  await tx.query(
    `UPDATE queued_messages m SET position = v.position
       FROM unnest($3::uuid[], $4::bigint[]) AS v(id, position)
      WHERE m.endpoint_id = $1 AND m.session_id = $2 AND m.id = v.id AND NOT m.reserved_in_flight`,
    [s.endpointId, s.sessionId, ids, positions],
  );
}
