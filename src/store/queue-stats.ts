// Reads for the scrape-time queue collectors: how many todos each queue holds in each
// state (the maintained counters, store/todo-counts.ts), and how long its oldest pending
// todo has waited (one index probe per queue). Synthetic (self-test) todos are in neither.
// Every instance reads the same rows, so every instance reports the same truth, and a
// scrape costs the number of queues, never the number of todos.

import type { Queryable } from '../db/pool.js';
import type { TodoState } from '../domain/todo.js';
import { queuesHolding, stateCounts } from './todo-counts.js';

export interface QueueStateCount {
  queue: string;
  state: TodoState;
  count: number;
}

/** Counts per queue and state, plus every queue an endpoint is granted (count 0, state null). */
export async function queueStateCounts(
  db: Queryable,
): Promise<Array<{ queue: string; state: TodoState | null; count: number }>> {
  const [counts, granted] = await Promise.all([
    stateCounts(db, null),
    db.query<{ queue: string }>(`SELECT DISTINCT unnest(queues) AS queue FROM endpoints WHERE revoked_at IS NULL`),
  ]);
  return [
    ...counts.map((c) => ({ queue: c.queue, state: c.state, count: c.count })),
    ...granted.rows.map((r) => ({ queue: r.queue, state: null, count: 0 })),
  ];
}

/**
 * Seconds the oldest pending, ready todo of each queue has waited since it became ready:
 * per (endpoint, queue) holding pending todos, the head of its readiness index.
 */
export async function oldestPendingAges(db: Queryable): Promise<Array<{ queue: string; seconds: number }>> {
  const res = await db.query<{ queue: string; seconds: number }>(
    `SELECT q.queue, extract(epoch FROM now() - min(h.ready_at))::float8 AS seconds
       FROM (${queuesHolding(`'pending'`)}) q
       CROSS JOIN LATERAL (
         SELECT t.ready_at FROM todos t
          WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.ready_at <= now()
            AND t.state = 'pending' AND NOT t.synthetic
          ORDER BY t.ready_at LIMIT 1) h
      GROUP BY q.queue`,
  );
  return res.rows;
}
