// The admission series (docs/design/admission.md, "Audit, metrics, retention"): the
// charged and refused counters (`metrics.admission`), moved after the claim transaction
// commits (charged) or after the refusal (refused), and a scrape-time collector fed every
// policy with its decision at one instant, read from the database by the composition
// root, so every instance reports the same truth. A failing read counts
// switchboard_collection_errors_total{collector="admission"} and never breaks the scrape.
// The gauges carry the endpoint's slug and the queue name, each through its capped label
// (`endpointLabel`, `queueLabel`), so two tenants' budgeted queues of one name stay apart.
// The counters are moved where only the queue is at hand and carry `queue` alone.

import type { Counter, Gauge, Registry } from 'prom-client';
import type { Decision } from '../admission/policy.js';
import { counter, type Collector, type SeriesLabels } from './define.js';

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
  /** The endpoint's slug. */
  endpoint: string;
  queue: string;
  in_flight: number;
  max_claims_per_window: number | null;
  pending: number;
  decision: Decision;
}

type Series = Map<string, number>;
const add = (m: Series, key: string, n: number) => m.set(key, (m.get(key) ?? 0) + n);

/** The labels of a policy's series, joined (endpoints and queues past their caps folded). */
const keyOf = (metrics: SeriesLabels, s: AdmissionSample, ...rest: string[]) =>
  [metrics.endpointLabel(s.endpoint), metrics.queueLabel(s.queue), ...rest].join('\u0000');

/**
 * Sums a per-policy number into its endpoint and queue's sample (past the label caps they
 * fold into `_other` and `other`); `value` null leaves the policy out.
 */
function perQueue(
  gauge: Gauge<string>,
  metrics: SeriesLabels,
  samples: AdmissionSample[],
  value: (s: AdmissionSample) => number | null,
): void {
  const series: Series = new Map();
  for (const s of samples) {
    const n = value(s);
    const key = keyOf(metrics, s);
    if (n !== null) add(series, key, n);
  }
  for (const [key, n] of series) {
    const [endpoint = '', queue = ''] = key.split('\u0000');
    gauge.set({ endpoint, queue }, n);
  }
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
      labelNames: ['endpoint', 'queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.decision.usage?.used ?? null),
    },
    {
      name: 'switchboard_admission_window_limit',
      help: 'max_claims_per_window.',
      labelNames: ['endpoint', 'queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.max_claims_per_window),
    },
    {
      name: 'switchboard_admission_in_flight',
      help: 'Claimed todos of budgeted queues.',
      labelNames: ['endpoint', 'queue'],
      fill: (gauge, samples, metrics) => perQueue(gauge, metrics, samples, (s) => s.in_flight),
    },
    {
      name: 'switchboard_admission_deferred_todos',
      help: 'Pending todos a budget holds back.',
      labelNames: ['endpoint', 'queue', 'reason'],
      fill: (gauge, samples, metrics) => {
        const deferred: Series = new Map();
        for (const s of samples) {
          if (!s.decision.admit) add(deferred, keyOf(metrics, s, s.decision.reason), s.pending);
        }
        for (const [key, n] of deferred) {
          const [endpoint = '', queue = '', reason = ''] = key.split('\u0000');
          gauge.set({ endpoint, queue, reason }, n);
        }
      },
    },
  ],
};
