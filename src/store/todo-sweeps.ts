// Background statements over todos of every endpoint (the documented exemption from
// endpoint scoping: sweeps act for the server, never for a caller). Each works in
// bounded batches with SKIP LOCKED, so it never waits on a claimer and never holds
// thousands of row locks.

import type { Queryable } from '../db/pool.js';
import { queuesHolding } from './todo-counts.js';
import { NOTIFY_READY, closeAttemptSql } from './todo-sql.js';

/**
 * Lapsed claims → pending (attempts left) or failed as a dead letter (at the cap); the
 * open attempt closes as lease_expired; one todo_ready per (endpoint, queue) requeued.
 */
export async function reapExpired(db: Queryable, limit: number): Promise<{ requeued: number; deadLettered: number }> {
  const res = await db.query<{ requeued: number; dead: number }>(
    `WITH lapsed AS (
       SELECT endpoint_id, id FROM todos
        WHERE state = 'claimed' AND lease_expires_at <= now() AND NOT synthetic
        ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED),
     moved AS (
       UPDATE todos t SET
         state = CASE WHEN t.attempt < t.max_attempts THEN 'pending' ELSE 'failed' END,
         owner_session_id = CASE WHEN t.attempt < t.max_attempts THEN NULL ELSE t.owner_session_id END,
         error = CASE WHEN t.attempt < t.max_attempts THEN t.error ELSE 'lease expired on the last attempt' END,
         lease_expires_at = NULL, next_retry_at = NULL,
         ready_at = CASE WHEN t.attempt < t.max_attempts THEN now() END,
         updated_at = now()
       FROM lapsed WHERE t.endpoint_id = lapsed.endpoint_id AND t.id = lapsed.id
       RETURNING t.endpoint_id, t.id, t.queue, t.state, t.claims),
     closed AS (${closeAttemptSql('moved', 'lease_expired')}),
     notified AS (
       SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM moved WHERE state = 'pending') r)
     SELECT (SELECT count(*) FROM moved WHERE state = 'pending') AS requeued,
            (SELECT count(*) FROM moved WHERE state = 'failed') AS dead,
            (SELECT count(*) FROM notified) AS notices`,
    [limit],
  );
  const row = res.rows[0];
  return { requeued: row?.requeued ?? 0, deadLettered: row?.dead ?? 0 };
}

/**
 * Due retries → pending, keeping their place (ready_at stays the due time). A pending row
 * without ready_at would read as scheduled (0014_work_model.sql), so a row that has none
 * (a retry forced onto a dead letter) becomes ready now.
 */
export async function requeueDueRetries(db: Queryable, limit: number): Promise<number> {
  const res = await db.query<{ requeued: number }>(
    `WITH due AS (
       SELECT endpoint_id, id FROM todos
        WHERE state = 'failed' AND next_retry_at <= now() AND NOT synthetic
        ORDER BY next_retry_at LIMIT $1 FOR UPDATE SKIP LOCKED),
     moved AS (
       UPDATE todos t SET state = 'pending', next_retry_at = NULL, ready_at = coalesce(t.ready_at, now()),
         updated_at = now()
       FROM due WHERE t.endpoint_id = due.endpoint_id AND t.id = due.id
       RETURNING t.endpoint_id, t.queue),
     notified AS (SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM moved) r)
     SELECT (SELECT count(*) FROM moved) AS requeued, (SELECT count(*) FROM notified) AS notices`,
    [limit],
  );
  return res.rows[0]?.requeued ?? 0;
}

/**
 * Deletes one batch of terminal todos last changed before the cutoff; never live ones.
 * Walks the queues that hold terminal todos (the counters) and takes each one's oldest
 * from its done and dead-letter indexes, so a batch reads about the rows it deletes.
 */
export async function pruneTerminal(db: Queryable, olderThanSeconds: number, limit: number): Promise<number> {
  const old = (where: string) => `SELECT t.endpoint_id, t.id FROM todos t
     WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND ${where}
       AND t.updated_at < now() - make_interval(secs => $1) AND NOT t.synthetic
     ORDER BY t.updated_at LIMIT $2 FOR UPDATE SKIP LOCKED`;
  const res = await db.query(
    `WITH q AS (${queuesHolding(`'done', 'failed', 'canceled'`)}),
     done AS (SELECT o.* FROM q CROSS JOIN LATERAL (${old(`t.state = 'done'`)}) o LIMIT $2),
     dead AS (
       SELECT o.* FROM q
        CROSS JOIN LATERAL (${old(`(t.state = 'canceled' OR (t.state = 'failed' AND t.next_retry_at IS NULL))`)}) o
        LIMIT $2 - (SELECT count(*) FROM done))
     DELETE FROM todos t USING (SELECT * FROM done UNION ALL SELECT * FROM dead) old
      WHERE t.endpoint_id = old.endpoint_id AND t.id = old.id`,
    [olderThanSeconds, limit],
  );
  return res.rowCount ?? 0;
}
