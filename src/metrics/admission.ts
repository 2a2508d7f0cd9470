// The admission series (docs/design/admission.md, "Audit, metrics, retention"): the
// charged and refused counters (`metrics.admission`), moved after the claim transaction
// commits (charged) or after the refusal (refused), and a scrape-time collector fed every
// policy with its decision at one instant, read from the database by the composition
// root, so every instance reports the same truth. A failing read counts
// switchboard_collection_errors_total{collector="admission"} and never breaks the scrape.
// Queue names are folded through the capped `queue` label.

import type { Counter, Gauge, Registry } from 'prom-client';
import type { Decision } from '../admission/policy.js';
import { counter } from './define.js';
import type { Collector, Metrics } from './index.js';

export interface AdmissionCounters {
  charged: Counter<'queue'>;
  refused: Counter<'queue' | 'reason'>;
}

export function admissionCounters(registry: Registry): AdmissionCounters {
  return {
    charged: counter(
      registry,
      'switchboard_admission_charged_total',
      'Window units spent: one per committed claim on a queue with a window limit (retries and takeovers too).',
      ['queue'],
    ),
    refused: counter(
      registry,
      'switchboard_admission_refused_total',
      'Claims a budget refused (nothing charged), by reason.',
      ['queue', 'reason'],
    ),
  };
}

/** One policy as the collector reads it: its counters and what it decides, at one instant. */
export interface AdmissionSample {
  queue: string;
  in_flight: number;
  max_claims_per_window: number | null;
  pending: number;
  decision: Decision;
}

type Series = Map<string, number>;
const add = (m: Series, key: string, n: number) => m.set(key, (m.get(key) ?? 0) + n);

/**
 * Sums a per-policy number into its queue's sample (queues past the label cap fold into
 * `other`); `value` null leaves the policy out. Every policy's queue is labelled, in order.
 */
function perQueue(
  gauge: Gauge<string>,
  metrics: Metrics,
  samples: AdmissionSample[],
  value: (s: AdmissionSample) => number | null,
): void {
  const series: Series = new Map();
  for (const s of samples) {
    const queue = metrics.queueLabel(s.queue);
    const n = value(s);
    if (n !== null) add(series, queue, n);
  }
  for (const [queue, n] of series) gauge.set({ queue }, n);
}

export const ADMISSION: Collector<AdmissionSample[]> = {
  name: 'admission',
  gauges: [
    {
      name: 'switchboard_admission_policies',
      help: 'Admission policies.',
      fill: (gauge, samples) => gauge.set(samples.length),
    },
    {
      name: 'switchboard_admission_window_used',
      help: 'Units spent in the current window.',
      labelNames: ['queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.decision.usage?.used ?? null),
    },
    {
      name: 'switchboard_admission_window_limit',
      help: 'max_claims_per_window.',
      labelNames: ['queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.max_claims_per_window),
    },
    {
      name: 'switchboard_admission_in_flight',
      help: 'Claimed todos of budgeted queues.',
      labelNames: ['queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.in_flight),
    },
    {
      name: 'switchboard_admission_deferred_todos',
      help: 'Pending todos a budget holds back.',
      labelNames: ['queue', 'reason'],
      fill: (gauge, samples, metrics) => {
        const deferred: Series = new Map();
        for (const s of samples) {
          const queue = metrics.queueLabel(s.queue);
          if (!s.decision.admit) add(deferred, `${queue}\u0000${s.decision.reason}`, s.pending);
        }
        for (const [key, n] of deferred) {
          const [queue = '', reason = ''] = key.split('\u0000');
          gauge.set({ queue, reason }, n);
        }
      },
    },
  ],
};
