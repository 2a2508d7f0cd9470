// Scrape-time queue series: switchboard_queue_todos{queue,state}, zero-filled for every
// known queue (any queue with todos or granted to a live endpoint) and every state, and
// switchboard_queue_oldest_pending_seconds{queue}. Read from the database at each scrape.

import type { Queryable } from '../db/pool.js';
import { TODO_STATES } from '../domain/todo.js';
import { oldestPendingAges, queueStateCounts } from '../store/queue-stats.js';
import type { Metrics } from './index.js';

export function queueCollectors(metrics: Metrics, db: Queryable): void {
  metrics.gauge('queues', 'switchboard_queue_todos', 'Todos per queue and state.', ['queue', 'state'], async (g) => {
    const rows = await queueStateCounts(db);
    for (const queue of new Set(rows.map((r) => metrics.queueLabel(r.queue)))) {
      for (const state of TODO_STATES) g.set({ queue, state }, 0);
    }
    for (const r of rows) if (r.state !== null) g.inc({ queue: metrics.queueLabel(r.queue), state: r.state }, r.count);
  });
  metrics.gauge(
    'queues',
    'switchboard_queue_oldest_pending_seconds',
    'Seconds the oldest ready pending todo of each queue has waited.',
    ['queue'],
    async (g) => {
      const ages = new Map<string, number>();
      for (const { queue, seconds } of await oldestPendingAges(db)) {
        const label = metrics.queueLabel(queue);
        ages.set(label, Math.max(ages.get(label) ?? 0, seconds));
      }
      for (const [queue, seconds] of ages) g.set({ queue }, seconds);
    },
  );
}
