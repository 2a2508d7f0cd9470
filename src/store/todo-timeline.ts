// The reads behind a todo's timeline (src/todos/timeline.ts, docs/design/ask-human.md,
// "History"): who made the todo, its attempts, its questions, the todos handed from it and
// its reply. Each is a primary-key or index prefix read scoped by the endpoint first,
// newest first and bounded by `limit`; the rings come from listTodoRings (todo-rings.ts).

import type { Queryable } from '../db/pool.js';

export interface TimelineOrigin {
  created_at: Date;
  state: string;
  source: string | null;
  schedule_id: string | null;
  event_id: string | null;
  completed_at: Date | null;
  /** The creating human's email, or null. */
  human: string | null;
  /** The creating endpoint's slug (an agent's create or a hand-off), or null. */
  endpoint: string | null;
  /** The slug of the todo's own endpoint (whose agent hands work off from it). */
  own_endpoint: string;
}

export async function timelineOrigin(db: Queryable, endpointId: string, id: string): Promise<TimelineOrigin | null> {
  const res = await db.query<TimelineOrigin>(
    `SELECT t.created_at, t.state, t.source, t.schedule_id, t.event_id, t.completed_at,
            h.email AS human, e.slug AS endpoint, o.slug AS own_endpoint
       FROM todos t
       JOIN endpoints o ON o.id = t.endpoint_id
       LEFT JOIN humans h ON h.id = t.created_by_human_id
       LEFT JOIN endpoints e ON e.id = t.created_by_endpoint_id
      WHERE t.endpoint_id = $1 AND t.id = $2`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

export interface TimelineAttempt {
  seq: number;
  session_id: string | null;
  claimed_at: Date;
  ended_at: Date | null;
  outcome: string | null;
}

/** The newest `limit` attempts, newest first (the attempts' primary key, backwards). */
export async function timelineAttempts(
  db: Queryable,
  endpointId: string,
  id: string,
  limit: number,
): Promise<TimelineAttempt[]> {
  const res = await db.query<TimelineAttempt>(
    `SELECT seq, session_id, claimed_at, ended_at, outcome FROM todo_attempts
      WHERE endpoint_id = $1 AND todo_id = $2 ORDER BY seq DESC LIMIT $3`,
    [endpointId, id, limit],
  );
  return res.rows;
}

export interface TimelineAsk {
  seq: number;
  question: string;
  choices: string[] | null;
  asked_at: Date;
  ended_at: Date | null;
  outcome: 'answered' | 'timed_out' | 'canceled' | null;
  answer_text: string | null;
  answer_choice: number | null;
  answered_by: string | null;
  /** The session whose attempt asked. */
  session_id: string | null;
}

/** The newest `limit` questions, newest first, each with the session that asked it. */
export async function timelineAsks(
  db: Queryable,
  endpointId: string,
  id: string,
  limit: number,
): Promise<TimelineAsk[]> {
  const res = await db.query<TimelineAsk>(
    `SELECT q.seq, q.question, q.choices, q.asked_at, q.ended_at, q.outcome, q.answer_text, q.answer_choice,
            q.answered_by, a.session_id
       FROM todo_asks q
       LEFT JOIN todo_attempts a ON a.endpoint_id = q.endpoint_id AND a.todo_id = q.todo_id AND a.seq = q.seq
      WHERE q.endpoint_id = $1 AND q.todo_id = $2 ORDER BY q.seq DESC LIMIT $3`,
    [endpointId, id, limit],
  );
  return res.rows;
}

export interface TimelineChild {
  id: string;
  endpoint: string;
  queue: string | null;
  reply: boolean;
  created_at: Date;
}

/** The newest `limit` todos handed from this one (todo_links_parent_idx), newest first. */
export async function timelineChildren(
  db: Queryable,
  endpointId: string,
  id: string,
  limit: number,
): Promise<TimelineChild[]> {
  const res = await db.query<TimelineChild>(
    `SELECT l.child_id AS id, e.slug AS endpoint, t.queue, l.reply, l.created_at
       FROM todo_links l JOIN endpoints e ON e.id = l.child_endpoint_id
       LEFT JOIN todos t ON t.endpoint_id = l.child_endpoint_id AND t.id = l.child_id
      WHERE l.from_endpoint_id = $1 AND l.parent_id = $2
      ORDER BY l.created_at DESC, l.child_id DESC LIMIT $3`,
    [endpointId, id, limit],
  );
  return res.rows;
}

export interface TimelineReply {
  /** The sender's slug: the endpoint the reply goes to. */
  endpoint: string;
  state: string;
  created_at: Date;
  delivered_at: Date | null;
  delivered_as: 'message' | 'todo' | 'dropped' | null;
  delivered_ref: string | null;
}

/** The reply this todo owes or sent its sender (docs/design/handoff.md, "Reply"), or null. */
export async function timelineReply(db: Queryable, endpointId: string, id: string): Promise<TimelineReply | null> {
  const res = await db.query<TimelineReply>(
    `SELECT e.slug AS endpoint, r.state, r.created_at, r.delivered_at, r.delivered_as, r.delivered_ref
       FROM handoff_replies r JOIN endpoints e ON e.id = r.endpoint_id
      WHERE r.child_endpoint_id = $1 AND r.child_id = $2`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}
