// The per-minute queue history behind the board's charts (0023_queue_rollups.sql,
// docs/design/queue-rollups.md): the minute sample of depth, work in flight and the oldest
// ready todo; the reads of a window of it for many queues at once; and its retention.
// The throughput columns are written by the counter fold (store/todo-counts.ts), not here.
// Every statement costs the number of queues (or of rows it returns), never of todos.

import type { Queryable } from '../db/pool.js';
import type { PruneArgs } from './retention.js';
import { DELTAS } from './todo-counts.js';

/**
 * The sample of the current minute, for every queue of a live endpoint that holds ready or
 * claimed work: depth and in flight from the counters (folded counts plus deltas, one
 * snapshot), the oldest ready pending todo's ready_at from the head of the pending-age index
 * (0014_work_model.sql), one probe per queue with a backlog. A queue with no live work
 * writes no row: no row reads as an idle minute. Rewrites the minute's sample if run twice.
 */
export const SAMPLE_ROLLUPS_SQL = `
  WITH live AS (
    SELECT c.endpoint_id, c.queue,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0) AS depth,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'claimed'), 0) AS in_flight
      FROM (SELECT endpoint_id, queue, state, n FROM todo_counts WHERE state IN ('pending', 'claimed')
            UNION ALL
            SELECT * FROM (${DELTAS}) d WHERE d.state IN ('pending', 'claimed')) c
     WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = c.endpoint_id)
     GROUP BY 1, 2
    HAVING sum(c.n) <> 0)
  INSERT INTO queue_rollups AS r (endpoint_id, queue, minute, depth, in_flight, oldest_ready_at)
  SELECT l.endpoint_id, l.queue, date_trunc('minute', now()), l.depth, l.in_flight,
         CASE WHEN l.depth > 0 THEN (
           SELECT t.ready_at FROM todos t
            WHERE t.endpoint_id = l.endpoint_id AND t.queue = l.queue AND t.ready_at <= now()
              AND t.state = 'pending' AND NOT t.synthetic
            ORDER BY t.ready_at LIMIT 1) END
    FROM live l
  ON CONFLICT (endpoint_id, queue, minute) DO UPDATE
    SET depth = excluded.depth, in_flight = excluded.in_flight, oldest_ready_at = excluded.oldest_ready_at`;

/** Writes the current minute's sample; the number of queues sampled. */
export async function sampleQueueRollups(db: Queryable): Promise<number> {
  const res = await db.query(SAMPLE_ROLLUPS_SQL);
  return res.rowCount ?? 0;
}

export interface QueueRef {
  endpointId: string;
  queue: string;
}

export interface RollupBucket {
  endpoint_id: string;
  queue: string;
  /** The bucket's start. */
  at: Date;
  /** The largest depth and in-flight sample in the bucket. */
  depth: number;
  in_flight: number;
  created: number;
  completed: number;
  failed: number;
}

/**
 * The rollups of the last `windowSeconds` of every queue given, in buckets of
 * `bucketSeconds` (peak depth, summed throughput), oldest first: one statement, one range
 * read of the primary key per queue.
 */
export async function rollupBuckets(
  db: Queryable,
  queues: QueueRef[],
  windowSeconds: number,
  bucketSeconds: number,
): Promise<RollupBucket[]> {
  if (queues.length === 0) return [];
  const res = await db.query<RollupBucket>(
    `SELECT q.endpoint_id, q.queue, b.at, b.depth, b.in_flight, b.created, b.completed, b.failed
       FROM unnest($1::text[], $2::text[]) q(endpoint_id, queue)
       CROSS JOIN LATERAL (
         SELECT to_timestamp(floor(extract(epoch FROM r.minute) / $4::int) * $4::int) AS at,
                max(r.depth)::int AS depth, max(r.in_flight)::int AS in_flight, sum(r.created)::int AS created,
                sum(r.completed)::int AS completed, sum(r.failed)::int AS failed
           FROM queue_rollups r
          WHERE r.endpoint_id = q.endpoint_id AND r.queue = q.queue
            AND r.minute > now() - make_interval(secs => $3::int)
          GROUP BY 1) b
      ORDER BY 1, 2, 3`,
    [queues.map((q) => q.endpointId), queues.map((q) => q.queue), windowSeconds, bucketSeconds],
  );
  return res.rows;
}

/** The oldest ready pending todo's ready_at of each queue given that has one: one index probe each. */
export async function oldestReadyOf(
  db: Queryable,
  queues: QueueRef[],
): Promise<Array<{ endpoint_id: string; queue: string; ready_at: Date }>> {
  if (queues.length === 0) return [];
  const res = await db.query<{ endpoint_id: string; queue: string; ready_at: Date }>(
    `SELECT q.endpoint_id, q.queue, h.ready_at
       FROM unnest($1::text[], $2::text[]) q(endpoint_id, queue)
       CROSS JOIN LATERAL (
         SELECT t.ready_at FROM todos t
          WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.ready_at <= now()
            AND t.state = 'pending' AND NOT t.synthetic
          ORDER BY t.ready_at LIMIT 1) h`,
    [queues.map((q) => q.endpointId), queues.map((q) => q.queue)],
  );
  return res.rows;
}

/** One batch of rollup minutes older than the cutoff, oldest first through the minute index. */
export async function pruneRollups(db: Queryable, a: PruneArgs): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT endpoint_id, queue, minute FROM queue_rollups
        WHERE minute < now() - make_interval(secs => $1)
        ORDER BY minute LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM queue_rollups r USING old
      WHERE r.endpoint_id = old.endpoint_id AND r.queue = old.queue AND r.minute = old.minute`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}
