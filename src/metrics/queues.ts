// Scrape-time queue series: switchboard_queue_todos{queue,state}, zero-filled for every
// known queue (any queue with todos or granted to a live endpoint) and every state, and
// switchboard_queue_oldest_pending_seconds{queue}. Each is fed by its own read of the
// database at every scrape, which the composition root gives `Metrics.collect`.

import { TODO_STATES, type TodoState } from '../domain/todo.js';
import type { Collector } from './index.js';

/** Todos per queue and state; state null: a known queue (granted to a live endpoint) with none. */
export type QueueTodoCounts = Array<{ queue: string; state: TodoState | null; count: number }>;
/** Seconds the oldest ready pending todo has waited, per queue (or per endpoint and queue). */
export type OldestPending = Array<{ queue: string; seconds: number }>;

export const QUEUE_TODOS: Collector<QueueTodoCounts> = {
  name: 'queues',
  gauges: [
    {
      name: 'switchboard_queue_todos',
      help: 'Todos per queue and state.',
      labelNames: ['queue', 'state'],
      fill: (gauge, rows, metrics) => {
        for (const queue of new Set(rows.map((r) => metrics.queueLabel(r.queue)))) {
          for (const state of TODO_STATES) gauge.set({ queue, state }, 0);
        }
        for (const r of rows) {
          if (r.state !== null) gauge.inc({ queue: metrics.queueLabel(r.queue), state: r.state }, r.count);
        }
      },
    },
  ],
};

export const OLDEST_PENDING: Collector<OldestPending> = {
  name: 'queues',
  gauges: [
    {
      name: 'switchboard_queue_oldest_pending_seconds',
      help: 'Seconds the oldest ready pending todo of each queue has waited.',
      labelNames: ['queue'],
      fill: (gauge, rows, metrics) => {
        const ages = new Map<string, number>();
        for (const { queue, seconds } of rows) {
          const label = metrics.queueLabel(queue);
          ages.set(label, Math.max(ages.get(label) ?? 0, seconds));
        }
        for (const [queue, seconds] of ages) gauge.set({ queue }, seconds);
      },
    },
  ],
};
