// The admission series (docs/design/admission.md, "Audit, metrics, retention"): the
// charged and refused counters, moved after the claim transaction commits (charged) or
// after the refusal (refused), and a scrape-time collector that reads the policies, their
// current windows and the deferred work from the database, so every instance reports the
// same truth. A failing collector counts
// switchboard_collection_errors_total{collector="admission"} and never breaks the scrape.
// Queue names are folded through the capped `queue` label.

import { Counter, Gauge } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import { decide } from '../admission/policy.js';
import { allPolicyStates, countersOf } from '../store/admission.js';
import type { Metrics } from './index.js';

/** Policies read per scrape: one row each; far above any real install's count. */
const COLLECT_LIMIT = 10_000;

function counter<L extends string>(metrics: Metrics, name: string, help: string, labels: L[]): Counter<L> {
  return (metrics.registry.getSingleMetric(name) as Counter<L> | undefined) ?? metrics.counter(name, help, labels);
}

export function admissionCharged(metrics: Metrics): Counter<'queue'> {
  return counter(
    metrics,
    'switchboard_admission_charged_total',
    'Window units spent: one per committed claim on a queue with a window limit (retries and takeovers too).',
    ['queue'],
  );
}

export function admissionRefused(metrics: Metrics): Counter<'queue' | 'reason'> {
  return counter(
    metrics,
    'switchboard_admission_refused_total',
    'Claims a budget refused (nothing charged), by reason.',
    ['queue', 'reason'],
  );
}

export function collectionErrors(metrics: Metrics): Counter<'collector'> {
  return counter(
    metrics,
    'switchboard_collection_errors_total',
    'Scrape-time collectors that failed to read the database.',
    ['collector'],
  );
}

type Series = Map<string, number>;
const add = (m: Series, key: string, n: number) => m.set(key, (m.get(key) ?? 0) + n);

/** Registers the scrape-time admission gauges on this registry. */
export function registerAdmissionCollector(metrics: Metrics, db: Queryable): void {
  const errors = collectionErrors(metrics);
  const gauges = {
    policies: new Gauge({ name: 'switchboard_admission_policies', help: 'Admission policies.', registers: [] }),
    used: gauge('switchboard_admission_window_used', 'Units spent in the current window.', ['queue']),
    limit: gauge('switchboard_admission_window_limit', 'max_claims_per_window.', ['queue']),
    inFlight: gauge('switchboard_admission_in_flight', 'Claimed todos of budgeted queues.', ['queue']),
    deferred: gauge('switchboard_admission_deferred_todos', 'Pending todos a budget holds back.', ['queue', 'reason']),
  };
  let last: Promise<void> | null = null;
  const refresh = async () => {
    const states = await allPolicyStates(db, COLLECT_LIMIT);
    const used: Series = new Map();
    const limit: Series = new Map();
    const inFlight: Series = new Map();
    const deferred: Series = new Map();
    for (const s of states) {
      const queue = metrics.queueLabel(s.queue);
      const d = decide(s, countersOf(s), s.at);
      add(inFlight, queue, s.in_flight);
      if (s.max_claims_per_window !== null) add(limit, queue, s.max_claims_per_window);
      if (d.usage) add(used, queue, d.usage.used);
      if (!d.admit) add(deferred, `${queue}\u0000${d.reason}`, s.pending);
    }
    gauges.policies.set(states.length);
    for (const [g, series] of [
      [gauges.used, used],
      [gauges.limit, limit],
      [gauges.inFlight, inFlight],
    ] as const) {
      g.reset();
      for (const [queue, n] of series) g.set({ queue }, n);
    }
    gauges.deferred.reset();
    for (const [key, n] of deferred) {
      const [queue = '', reason = ''] = key.split('\u0000');
      gauges.deferred.set({ queue, reason }, n);
    }
  };
  // One database read per scrape feeds every gauge: the first gauge collected starts it.
  const collect = async () => {
    last ??= refresh()
      .catch(() => {
        errors.inc({ collector: 'admission' });
      })
      .finally(() => setImmediate(() => (last = null)));
    await last;
  };
  for (const g of Object.values(gauges)) {
    (g as unknown as { collect: () => Promise<void> }).collect = collect;
    metrics.registry.registerMetric(g);
  }
  // The error counter is read after this scrape's read settled, so a failure shows in the
  // scrape that met it; the series exists (at 0) from the start.
  errors.inc({ collector: 'admission' }, 0);
  const before = (errors as unknown as { collect?: () => unknown }).collect;
  (errors as unknown as { collect: () => Promise<void> }).collect = async () => {
    await before?.();
    await collect();
  };
}

function gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
  return new Gauge<L>({ name, help, labelNames, registers: [] });
}
