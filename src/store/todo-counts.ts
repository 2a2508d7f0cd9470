// The maintained todo counters (0012_backlog_scale.sql): per (endpoint, queue, state), the
// folded count in todo_counts plus the deltas the triggers appended since the last fold.
// Every read sums both in one statement, so it is exact at one snapshot and costs the
// number of queues, never the number of todos. Synthetic todos are not counted, and a
// scheduled todo counts as 'scheduled', not 'pending' (0014_work_model.sql).

import type { Queryable } from '../db/pool.js';
import type { CountedState } from '../domain/todo.js';

export interface StateCount {
  endpoint_id: string;
  queue: string;
  state: CountedState;
  count: number;
}

// Each delta row moves n todos from from_state (null: inserted) to to_state (null: deleted).
export const DELTAS = `SELECT d.endpoint_id, d.queue, v.state, v.n FROM todo_count_deltas d
  CROSS JOIN LATERAL (VALUES (d.from_state, -d.n), (d.to_state, d.n)) v(state, n) WHERE v.state IS NOT NULL`;

/**
 * SQL: the (endpoint_id, queue) pairs that may hold todos in one of `states` (a SQL list of
 * literals): a folded count above zero, or a delta into one of them not folded yet.
 */
export function queuesHolding(states: string): string {
  return `SELECT endpoint_id, queue FROM todo_counts WHERE state IN (${states}) AND n > 0
    UNION SELECT endpoint_id, queue FROM todo_count_deltas WHERE to_state IN (${states})`;
}

/** SQL: the exact count of (endpoint, queue)'s todos in a state, as an expression. */
export function countSql(endpoint: string, queue: string, state: string): string {
  return `todo_count(${endpoint}, ${queue}, ${state})`;
}

/** Non-zero counts of these endpoints (every endpoint when null), of live endpoints only. */
export async function stateCounts(db: Queryable, endpointIds: string[] | null): Promise<StateCount[]> {
  const res = await db.query<StateCount & { count: string }>(
    `SELECT c.endpoint_id, c.queue, c.state, sum(c.n) AS count FROM (
       SELECT endpoint_id, queue, state, n FROM todo_counts
        WHERE $1::text[] IS NULL OR endpoint_id = ANY($1::text[])
       UNION ALL
       SELECT * FROM (${DELTAS}) d WHERE $1::text[] IS NULL OR d.endpoint_id = ANY($1::text[])) c
      WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = c.endpoint_id)
      GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0`,
    [endpointIds],
  );
  return res.rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/**
 * The throughput of the minute (docs/design/queue-rollups.md): the folded deltas' creations
 * (inserted, null → any state), completions (→ done) and failures (→ failed) added to each
 * queue's row of the current minute. Part of the fold's statement, so each delta is counted
 * in one minute exactly once, and no pass reads todos to count them.
 */
const ROLLUP_THROUGHPUT = `
  INSERT INTO queue_rollups AS r (endpoint_id, queue, minute, created, completed, failed)
  SELECT m.endpoint_id, m.queue, date_trunc('minute', now()),
         coalesce(sum(m.n) FILTER (WHERE m.from_state IS NULL), 0),
         coalesce(sum(m.n) FILTER (WHERE m.to_state = 'done'), 0),
         coalesce(sum(m.n) FILTER (WHERE m.to_state = 'failed'), 0)
    FROM moved m
   WHERE ((m.from_state IS NULL AND m.to_state IS NOT NULL) OR m.to_state IN ('done', 'failed'))
     AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = m.endpoint_id)
   GROUP BY 1, 2
  ON CONFLICT (endpoint_id, queue, minute) DO UPDATE SET created = r.created + excluded.created,
    completed = r.completed + excluded.completed, failed = r.failed + excluded.failed`;

/**
 * Moves the deltas into todo_counts (and their throughput into queue_rollups). Deletes exactly the delta rows its snapshot sees, so a
 * delta committed meanwhile waits for the next fold and a concurrent fold skips what this
 * one took: each delta is added once.
 */
export async function foldTodoCounts(db: Queryable): Promise<number> {
  const res = await db.query<{ folded: string }>(
    `WITH moved AS (DELETE FROM todo_count_deltas RETURNING *),
     summed AS (
       SELECT m.endpoint_id, m.queue, v.state, sum(v.n) AS n FROM moved m
        CROSS JOIN LATERAL (VALUES (m.from_state, -m.n), (m.to_state, m.n)) v(state, n)
        WHERE v.state IS NOT NULL GROUP BY 1, 2, 3),
     folded AS (
       INSERT INTO todo_counts (endpoint_id, queue, state, n)
       SELECT s.endpoint_id, s.queue, s.state, s.n FROM summed s
        WHERE s.n <> 0 AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.endpoint_id)
       ON CONFLICT (endpoint_id, queue, state) DO UPDATE SET n = todo_counts.n + excluded.n),
     rolled AS (${ROLLUP_THROUGHPUT})
     SELECT count(*) AS folded FROM moved`,
  );
  return Number(res.rows[0]?.folded ?? 0);
}

/**
 * Every (endpoint, queue, state) whose counter differs from count(*) over its rows, with
 * both numbers: empty when the counters are exact. A full count, so never on a request
 * path: for the reliability suite, the fuzzers and the tests.
 */
export const COUNTER_MISMATCHES_SQL = `
  WITH rows AS (
    SELECT endpoint_id, queue, todo_counted_state(state, ready_at) AS state, count(*) AS n FROM todos
     WHERE NOT synthetic GROUP BY 1, 2, 3),
  counted AS (
    SELECT c.endpoint_id, c.queue, c.state, sum(c.n) AS n FROM (
      SELECT endpoint_id, queue, state, n FROM todo_counts UNION ALL ${DELTAS}) c
     WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = c.endpoint_id) GROUP BY 1, 2, 3)
  SELECT coalesce(r.endpoint_id, c.endpoint_id) AS endpoint_id, coalesce(r.queue, c.queue) AS queue,
         coalesce(r.state, c.state) AS state, coalesce(r.n, 0) AS rows, coalesce(c.n, 0) AS counter
    FROM rows r FULL JOIN counted c USING (endpoint_id, queue, state)
   WHERE coalesce(r.n, 0) <> coalesce(c.n, 0)`;
