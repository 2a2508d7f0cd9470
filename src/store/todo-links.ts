// Todo lineage and the reply outbox (docs/design/handoff.md): the link a create_todo with
// parent_id or reply writes beside the child, the lineage reads (a todo's parent and its
// children), and the outbox rows the todos_handoff_reply trigger (migration 0040) writes
// when a linked child ends, taken one at a time with SKIP LOCKED by the delivery.

import type { Queryable } from '../db/pool.js';

export interface InsertLinkArgs {
  childEndpointId: string;
  childId: string;
  fromEndpointId: string;
  parentId: string | null;
  reply: boolean;
  replyQueue: string;
  depth: number;
}

/** Written once per child; a repeated idempotent create finds the row already there. */
export async function insertLink(db: Queryable, a: InsertLinkArgs): Promise<void> {
  // A reply marks the child (todos.reply_wanted): the reply trigger fires only on such
  // todos' ends (migrations/0044_reply_wanted.sql).
  await db.query(
    `WITH link AS (
       INSERT INTO todo_links (child_endpoint_id, child_id, from_endpoint_id, parent_id, reply, reply_queue, depth)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING
       RETURNING child_endpoint_id, child_id, reply)
     UPDATE todos t SET reply_wanted = true FROM link
      WHERE link.reply AND t.endpoint_id = link.child_endpoint_id AND t.id = link.child_id`,
    [a.childEndpointId, a.childId, a.fromEndpointId, a.parentId, a.reply, a.replyQueue, a.depth],
  );
}

/** How deep in a chain of hand-offs this todo is: 0 when nothing handed it. */
export async function depthOf(db: Queryable, endpointId: string, todoId: string): Promise<number> {
  const res = await db.query<{ depth: number }>(
    `SELECT depth FROM todo_links WHERE child_endpoint_id = $1 AND child_id = $2`,
    [endpointId, todoId],
  );
  return res.rows[0]?.depth ?? 0;
}

export interface ParentLink {
  id: string;
  endpoint: string;
  depth: number;
  reply: boolean;
}

export interface ChildLink {
  id: string;
  endpoint: string;
  queue: string | null;
  state: string | null;
  title: string | null;
  reply: boolean;
}

/** A todo's lineage: the todo it was handed from (if any) and the todos handed from it (at most `limit`). */
export async function linksOf(
  db: Queryable,
  endpointId: string,
  todoId: string,
  limit: number,
): Promise<{ parent: ParentLink | null; children: ChildLink[] }> {
  const parent = await db.query<ParentLink & { parent_id: string | null }>(
    `SELECT l.parent_id AS id, e.slug AS endpoint, l.depth, l.reply
       FROM todo_links l JOIN endpoints e ON e.id = l.from_endpoint_id
      WHERE l.child_endpoint_id = $1 AND l.child_id = $2 AND l.parent_id IS NOT NULL`,
    [endpointId, todoId],
  );
  const children = await db.query<ChildLink>(
    `SELECT l.child_id AS id, e.slug AS endpoint, t.queue, t.state, t.title, l.reply
       FROM todo_links l JOIN endpoints e ON e.id = l.child_endpoint_id
       LEFT JOIN todos t ON t.endpoint_id = l.child_endpoint_id AND t.id = l.child_id
      WHERE l.from_endpoint_id = $1 AND l.parent_id = $2
      ORDER BY l.created_at, l.child_id LIMIT $3`,
    [endpointId, todoId, limit],
  );
  return { parent: parent.rows[0] ?? null, children: children.rows };
}

export interface DueReply {
  child_endpoint_id: string;
  child_id: string;
  endpoint_id: string;
  parent_id: string | null;
  reply_queue: string;
  state: string;
}

/** The oldest undelivered reply nobody else is delivering, locked until the caller's transaction ends. */
export async function takeDueReply(tx: Queryable): Promise<DueReply | null> {
  const res = await tx.query<DueReply>(
    `SELECT child_endpoint_id, child_id, endpoint_id, parent_id, reply_queue, state
       FROM handoff_replies WHERE delivered_at IS NULL
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
  );
  return res.rows[0] ?? null;
}

export async function markDelivered(
  tx: Queryable,
  r: Pick<DueReply, 'child_endpoint_id' | 'child_id'>,
  as: 'message' | 'todo' | 'dropped',
  ref: string | null,
): Promise<void> {
  await tx.query(
    `UPDATE handoff_replies SET delivered_at = now(), delivered_as = $3, delivered_ref = $4
      WHERE child_endpoint_id = $1 AND child_id = $2`,
    [r.child_endpoint_id, r.child_id, as, ref],
  );
}

export interface ChildOutcome {
  id: string;
  endpoint: string;
  queue: string;
  title: string;
  state: string;
  result: unknown;
  error: string | null;
  summary: string | null;
  artifact: string | null;
}

/** What the child left: its result and error, and the summary and artifact of its last attempt. */
export async function childOutcome(db: Queryable, endpointId: string, id: string): Promise<ChildOutcome | null> {
  const res = await db.query<ChildOutcome>(
    `SELECT t.id, e.slug AS endpoint, t.queue, t.title, t.state, t.result, t.error, a.summary, a.artifact
       FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
       LEFT JOIN LATERAL (
         SELECT summary, artifact FROM todo_attempts
          WHERE endpoint_id = t.endpoint_id AND todo_id = t.id ORDER BY seq DESC LIMIT 1) a ON true
      WHERE t.endpoint_id = $1 AND t.id = $2`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

/** A live session of the endpoint to tell: one holding a stream first, then the most recently seen. */
export async function liveSessionOf(db: Queryable, endpointId: string): Promise<string | null> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL
      ORDER BY stream_open DESC, last_seen_at DESC LIMIT 1`,
    [endpointId],
  );
  return res.rows[0]?.id ?? null;
}

/** Retention: delivered replies older than the cutoff, at most `batch` per call. */
export async function pruneDeliveredReplies(
  db: Queryable,
  a: { olderThanSeconds: number; limit: number },
): Promise<number> {
  const res = await db.query(
    `DELETE FROM handoff_replies WHERE (child_endpoint_id, child_id) IN (
       SELECT child_endpoint_id, child_id FROM handoff_replies
        WHERE delivered_at < now() - make_interval(secs => $1) ORDER BY delivered_at LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}
