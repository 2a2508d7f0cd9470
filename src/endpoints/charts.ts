// What a queue's charts show (docs/design/queue-rollups.md): the rollups of a window cut
// into equal slots (peak depth and in flight, summed throughput; a slot with no row is an
// idle one: zero), and how long the oldest ready todo has waited, read live. The queues page
// reads every shown queue's in one statement each; the caller has scoped the queues to the
// signed-in human's endpoints.

import { oldestReadyOf, rollupBuckets, type QueueRef, type RollupBucket } from '../store/queue-rollups.js';
import type { EndpointDeps } from './manage.js';

export type { QueueRef };

/** A window of the charts: its length and its slot. */
export interface ChartWindow {
  seconds: number;
  slotSeconds: number;
}

/** The queues page: the last hour by the minute. */
export const LAST_HOUR: ChartWindow = { seconds: 3_600, slotSeconds: 60 };
/** The queue page's long view: the last day in 15-minute slots (96 points). */
export const LAST_DAY: ChartWindow = { seconds: 86_400, slotSeconds: 900 };

const METRICS = ['depth', 'in_flight', 'created', 'completed', 'failed'] as const;
export type ChartMetric = (typeof METRICS)[number];

export interface QueueChart {
  /** One value per slot, oldest first, per metric. */
  slots: Record<ChartMetric, number[]>;
  /** The start of the oldest slot. */
  from: Date;
  /** When the oldest ready pending todo became ready, or null when none waits. */
  oldestReadyAt: Date | null;
}

export const chartKey = (endpointId: string, queue: string) => `${endpointId}\u0000${queue}`;

function emptyChart(slots: number, from: Date, oldestReadyAt: Date | null): QueueChart {
  const zeros = () => Array.from({ length: slots }, () => 0);
  return {
    slots: { depth: zeros(), in_flight: zeros(), created: zeros(), completed: zeros(), failed: zeros() },
    from,
    oldestReadyAt,
  };
}

/** The charts of these queues over `window`, by chartKey; every queue given has one. */
export async function queueCharts(
  deps: Pick<EndpointDeps, 'db'>,
  queues: QueueRef[],
  window: ChartWindow,
  now: Date,
): Promise<Map<string, QueueChart>> {
  const [buckets, oldest] = await Promise.all([
    rollupBuckets(deps.db, queues, window.seconds, window.slotSeconds),
    oldestReadyOf(deps.db, queues),
  ]);
  const slot = window.slotSeconds * 1000;
  const count = Math.ceil(window.seconds / window.slotSeconds);
  const from = new Date((Math.floor(now.getTime() / slot) - (count - 1)) * slot);
  const charts = new Map<string, QueueChart>();
  for (const q of queues) {
    const ready = oldest.find((o) => o.endpoint_id === q.endpointId && o.queue === q.queue)?.ready_at ?? null;
    charts.set(chartKey(q.endpointId, q.queue), emptyChart(count, from, ready));
  }
  for (const b of buckets) place(charts.get(chartKey(b.endpoint_id, b.queue)), b, from, slot, count);
  return charts;
}

function place(chart: QueueChart | undefined, b: RollupBucket, from: Date, slot: number, count: number): void {
  if (!chart) return;
  // A bucket a little ahead of this clock (the database's clock runs ahead) lands in the last slot.
  const i = Math.min(count - 1, Math.floor((b.at.getTime() - from.getTime()) / slot));
  if (i < 0) return;
  for (const m of METRICS) chart.slots[m][i] = b[m];
}
