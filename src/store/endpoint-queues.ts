// What uses an endpoint's queues, read under the endpoint row's lock before queues are
// removed (docs/design/mcp-surface.md, "Changing an endpoint").

import type { Queryable } from '../db/pool.js';
import { countSql } from './todo-counts.js';

/** What still uses a queue of an endpoint: its live todos, schedules and webhooks. */
export interface QueueUse {
  queue: string;
  todos: number;
  schedules: number;
  webhooks: number;
}

/**
 * Locks the endpoint row FOR UPDATE (waiting for every insert in flight on it, see
 * LIVE_ENDPOINT in store/todo-sql.ts) and answers, for each of `queues`, what still uses
 * it: todos pending, scheduled, claimed, waiting on a human or failed (a failed one may be retried), from the
 * maintained counters, and the schedules and webhooks that target it. Run in the
 * transaction that removes the queues.
 */
export async function lockQueueUses(tx: Queryable, endpointId: string, queues: string[]): Promise<QueueUse[]> {
  await tx.query('SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE', [endpointId]);
  const res = await tx.query<QueueUse>(
    `SELECT q AS queue,
            (${['pending', 'scheduled', 'claimed', 'failed', 'waiting_on_human'].map((st) => countSql('$1', 'q', `'${st}'`)).join(' + ')})::int AS todos,
            (SELECT count(*) FROM schedules s WHERE s.endpoint_id = $1 AND s.queue = q)::int AS schedules,
            (SELECT count(*) FROM webhooks w WHERE w.endpoint_id = $1 AND w.queue = q)::int AS webhooks
       FROM unnest($2::text[]) AS u(q)`,
    [endpointId, queues],
  );
  return res.rows;
}
