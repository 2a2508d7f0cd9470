// Reads for the scrape-time queue collectors: how many todos each queue holds in each
// state, and how long its oldest pending todo has waited. Synthetic (self-test) todos
// are in neither. Aggregates only; every
// instance reads the same rows, so every instance reports the same truth.

import type { Queryable } from '../db/pool.js';
import type { TodoState } from '../domain/todo.js';

export interface QueueStateCount {
  queue: string;
  state: TodoState;
  count: number;
}

/** Counts per queue and state, plus every queue an endpoint is granted (count 0, state null). */
export async function queueStateCounts(
  db: Queryable,
): Promise<Array<{ queue: string; state: TodoState | null; count: number }>> {
  const res = await db.query<{ queue: string; state: TodoState | null; count: string }>(
    `SELECT queue, state, count(*) AS count FROM todos WHERE NOT synthetic GROUP BY queue, state
     UNION ALL
     SELECT DISTINCT unnest(queues), NULL, 0 FROM endpoints WHERE revoked_at IS NULL`,
  );
  return res.rows.map((r) => ({ queue: r.queue, state: r.state, count: Number(r.count) }));
}

/** Seconds the oldest pending, ready todo of each queue has waited since it became ready. */
export async function oldestPendingAges(db: Queryable): Promise<Array<{ queue: string; seconds: number }>> {
  const res = await db.query<{ queue: string; seconds: number }>(
    `SELECT queue, extract(epoch FROM now() - min(ready_at))::float8 AS seconds
       FROM todos WHERE state = 'pending' AND ready_at <= now() AND NOT synthetic GROUP BY queue`,
  );
  return res.rows;
}
