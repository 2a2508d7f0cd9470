// Scheduled todos (docs/design/todos.md, "Not before"): a todo created with a future
// not_before is pending with ready_at NULL, so no claim path, ring pass, hook or ready
// count sees it. The promotion pass is the one statement that makes such todos ready, and
// the read that tells an instance when the next one is due. A sweep over every endpoint
// (the documented exemption from endpoint scoping), through todos_scheduled_idx.

import type { Queryable } from '../db/pool.js';
import { NOTIFY_READY } from './todo-sql.js';

/**
 * Promotes up to `limit` due scheduled todos: ready_at = not_before (its place in line is
 * the instant it was due, not when a pass got to it), updated_at now (so the ring and hook
 * passes see a new ready transition, as for a created todo), and one todo_ready per
 * (endpoint, queue) on commit. The due rows are locked SKIP LOCKED and the update re-checks
 * `ready_at IS NULL`, so of two instances promoting at once each todo is promoted by one.
 */
export async function promoteDue(db: Queryable, limit: number): Promise<number> {
  const res = await db.query<{ promoted: number }>({
    name: 'promote_due',
    text: `WITH due AS (
       SELECT endpoint_id, id FROM todos
        WHERE state = 'pending' AND ready_at IS NULL AND not_before <= now()
        ORDER BY not_before LIMIT $1 FOR UPDATE SKIP LOCKED),
     moved AS (
       UPDATE todos t SET ready_at = t.not_before, updated_at = now()
         FROM due WHERE t.endpoint_id = due.endpoint_id AND t.id = due.id
          AND t.state = 'pending' AND t.ready_at IS NULL
       RETURNING t.endpoint_id, t.queue),
     notified AS (SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM moved) r)
     SELECT (SELECT count(*) FROM moved)::int AS promoted, (SELECT count(*) FROM notified) AS notices`,
    values: [limit],
  });
  return res.rows[0]?.promoted ?? 0;
}

/**
 * Milliseconds until the next scheduled todo is due, by the database's clock (0 when one
 * is due already), or null when none is scheduled: the head of todos_scheduled_idx.
 */
export async function msUntilNextDue(db: Queryable): Promise<number | null> {
  const res = await db.query<{ ms: number | null }>({
    name: 'ms_until_next_due',
    text: `SELECT greatest(0, extract(epoch FROM (not_before - now())) * 1000)::float8 AS ms FROM todos
            WHERE state = 'pending' AND ready_at IS NULL AND not_before IS NOT NULL
            ORDER BY not_before LIMIT 1`,
  });
  return res.rows[0]?.ms ?? null;
}
