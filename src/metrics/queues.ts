// Scrape-time queue series: switchboard_queue_todos{endpoint,queue,state}, zero-filled for
// every known queue (any queue with todos or granted to a live endpoint) and every state,
// and switchboard_queue_oldest_pending_seconds{endpoint,queue}. `endpoint` is the slug, so
// two tenants' queues of one name stay two series; past the endpoint cap
// (SWITCHBOARD_METRICS_MAX_ENDPOINTS) the rest are summed into endpoint="_other" and
// switchboard_queue_endpoints_folded says how many (docs/metrics.md, "Labels"). Each is
// fed by its own read of the database at every scrape, which the composition root gives
// `Metrics.collect`.

import { COUNTED_STATES, type CountedState } from '../domain/todo.js';
import type { Collector } from './define.js';

/** Todos per endpoint, queue and state; state null: a known queue (granted to a live endpoint) with none. */
export type QueueTodoCounts = Array<{ endpoint: string; queue: string; state: CountedState | null; count: number }>;
/** Seconds the oldest ready pending todo has waited, per endpoint and queue. */
export type OldestPending = Array<{ endpoint: string; queue: string; seconds: number }>;

export const QUEUE_TODOS: Collector<QueueTodoCounts> = {
  name: 'queues',
  gauges: [
    {
      name: 'switchboard_queue_todos',
      help: 'Todos per endpoint, queue and state (scheduled: pending, but not before a later time; not ready).',
      labelNames: ['endpoint', 'queue', 'state'],
      fill: (gauge, rows, metrics) => {
        const labels = rows.map((r) => ({
          endpoint: metrics.endpointLabel(r.endpoint),
          queue: metrics.queueLabel(r.queue),
        }));
        const known = new Map(labels.map((l) => [`${l.endpoint}\n${l.queue}`, l]));
        for (const l of known.values()) for (const state of COUNTED_STATES) gauge.set({ ...l, state }, 0);
        rows.forEach((r, i) => {
          if (r.state !== null) gauge.inc({ ...labels[i]!, state: r.state }, r.count);
        });
      },
    },
    {
      name: 'switchboard_queue_endpoints_folded',
      help: 'Endpoints past SWITCHBOARD_METRICS_MAX_ENDPOINTS whose queue series are summed into endpoint="_other".',
      fill: (gauge, rows, metrics) => {
        const folded = new Set(rows.filter((r) => metrics.endpointLabel(r.endpoint) === OTHER).map((r) => r.endpoint));
        gauge.set(folded.size);
      },
    },
  ],
};

/** The `endpoint` label of every endpoint past the cap. */
export const OTHER = '_other';

export const OLDEST_PENDING: Collector<OldestPending> = {
  name: 'queues',
  gauges: [
    {
      name: 'switchboard_queue_oldest_pending_seconds',
      help: 'Seconds the oldest ready pending todo of each endpoint and queue has waited.',
      labelNames: ['endpoint', 'queue'],
      fill: (gauge, rows, metrics) => {
        const ages = new Map<string, { endpoint: string; queue: string; seconds: number }>();
        for (const r of rows) {
          const label = { endpoint: metrics.endpointLabel(r.endpoint), queue: metrics.queueLabel(r.queue) };
          const key = `${label.endpoint}\n${label.queue}`;
          ages.set(key, { ...label, seconds: Math.max(ages.get(key)?.seconds ?? 0, r.seconds) });
        }
        for (const { endpoint, queue, seconds } of ages.values()) gauge.set({ endpoint, queue }, seconds);
      },
    },
  ],
};
