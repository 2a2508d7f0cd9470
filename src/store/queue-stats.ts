// Reads for the scrape-time queue collectors: how many todos each queue holds in each
// state (the maintained counters, store/todo-counts.ts), and how long its oldest pending
// todo has waited (one index probe per queue). Synthetic (self-test) todos are in neither.
// Every instance reads the same rows, so every instance reports the same truth, and a
// scrape costs the number of queues, never the number of todos.

import type { Queryable } from '../db/pool.js';
import type { CountedState } from '../domain/todo.js';
import { queuesHolding, stateCounts } from './todo-counts.js';

export interface QueueStateCount {
  /** The endpoint's slug. */
  endpoint: string;
  queue: string;
  state: CountedState;
  count: number;
}

/**
 * Counts per endpoint (slug), queue and state, plus every queue a live endpoint is granted
 * (count 0, state null). The slugs are read once per scrape, one row per endpoint.
 */
export async function queueStateCounts(
  db: Queryable,
): Promise<Array<{ endpoint: string; queue: string; state: CountedState | null; count: number }>> {
  const [counts, endpoints] = await Promise.all([
    stateCounts(db, null),
    db.query<{ id: string; slug: string; queues: string[]; live: boolean }>(
      `SELECT id, slug, queues, revoked_at IS NULL AS live FROM endpoints`,
    ),
  ]);
  const slugs = new Map(endpoints.rows.map((e) => [e.id, e.slug]));
  return [
    ...counts.flatMap((c) => {
      const endpoint = slugs.get(c.endpoint_id);
      return endpoint === undefined ? [] : [{ endpoint, queue: c.queue, state: c.state, count: c.count }];
    }),
    ...endpoints.rows
      .filter((e) => e.live)
      .flatMap((e) => e.queues.map((queue) => ({ endpoint: e.slug, queue, state: null, count: 0 }))),
  ];
}

/**
 * Seconds the oldest pending, ready todo of each queue has waited since it became ready:
 * per (endpoint, queue) holding pending todos, the head of its readiness index.
 */
export async function oldestPendingAges(
  db: Queryable,
): Promise<Array<{ endpoint: string; queue: string; seconds: number }>> {
  const res = await db.query<{ endpoint: string; queue: string; seconds: number }>(
    `SELECT e.slug AS endpoint, q.queue, extract(epoch FROM now() - min(h.ready_at))::float8 AS seconds
       FROM (${queuesHolding(`'pending'`)}) q
       JOIN endpoints e ON e.id = q.endpoint_id
       CROSS JOIN LATERAL (
         SELECT t.ready_at FROM todos t
          WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.ready_at <= now()
            AND t.state = 'pending' AND NOT t.synthetic
          ORDER BY t.ready_at LIMIT 1) h
      GROUP BY e.slug, q.queue`,
  );
  return res.rows;
}
