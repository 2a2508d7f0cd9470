// The doorbell series (docs/design/doorbell-acknowledgement.md). "Delivered" and "heard"
// are different words here too: rings_total counts rings written to a stream (delivered);
// acknowledged_total counts rings a claim or ack_doorbell proved heard within the window;
// unheard_total counts rings the window closed on. sent = acknowledged + unheard + open
// holds over the rows; the counters move once per ring, after the statement that decided
// it committed. Self-test (synthetic) rings are counted by none of them: the test never
// pollutes metrics.

import { Counter, Gauge } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import { countUnheardSessions } from '../store/doorbell-rings.js';
import { Metrics } from './index.js';

export interface RingCounted {
  kind: string;
  synthetic: boolean;
}

/** A counter of this registry, reused when registered already: every use case may build DoorbellMetrics. */
function counterOnce<L extends string>(metrics: Metrics, name: string, help: string, labels: L[]): Counter<L> {
  const existing = metrics.registry.getSingleMetric(name);
  return existing ? (existing as Counter<L>) : metrics.counter(name, help, labels);
}

export class DoorbellMetrics {
  readonly rings: Counter<'kind'>;
  readonly acknowledged: Counter<'kind' | 'via'>;
  readonly unheard: Counter<'kind'>;
  readonly dropped: Counter<'reason'>;

  constructor(metrics: Metrics) {
    this.rings = counterOnce(
      metrics,
      'switchboard_doorbell_rings_total',
      'Doorbell rings delivered: written to a session stream (not proof that anyone heard them).',
      ['kind'],
    );
    this.acknowledged = counterOnce(
      metrics,
      'switchboard_doorbell_rings_acknowledged_total',
      'Doorbell rings heard: acknowledged by a claim or ack_doorbell within the ack window.',
      ['kind', 'via'],
    );
    this.unheard = counterOnce(
      metrics,
      'switchboard_doorbell_rings_unheard_total',
      'Doorbell rings delivered but not heard: no claim or ack within the ack window.',
      ['kind'],
    );
    this.dropped = counterOnce(
      metrics,
      'switchboard_doorbell_ring_records_dropped_total',
      'Ring records the ring writer dropped (the doorbell itself was delivered): overflow or a failed insert.',
      ['reason'],
    );
    // Self-test rings count in none, so their kind never appears.
    metrics.zero(this.rings, Metrics.combinations({ kind: ['todo', 'digest'] }));
    metrics.zero(this.unheard, Metrics.combinations({ kind: ['todo', 'digest'] }));
    metrics.zero(this.acknowledged, Metrics.combinations({ kind: ['todo', 'digest'], via: ['claim', 'ack'] }));
    metrics.zero(this.dropped, Metrics.combinations({ reason: ['overflow', 'error'] }));
  }

  sent(rings: RingCounted[]): void {
    for (const r of rings) if (!r.synthetic) this.rings.inc({ kind: r.kind });
  }

  acked(rings: Array<RingCounted & { in_window: boolean }>, via: 'claim' | 'ack'): void {
    for (const r of rings) if (!r.synthetic && r.in_window) this.acknowledged.inc({ kind: r.kind, via });
  }

  markedUnheard(rings: RingCounted[]): void {
    for (const r of rings) if (!r.synthetic) this.unheard.inc({ kind: r.kind });
  }
}

/** The counter every failing scrape-time collector increments (defined once per registry). */
function collectionErrors(metrics: Metrics): Counter<'collector'> {
  return counterOnce(
    metrics,
    'switchboard_collection_errors_total',
    'Scrape-time collectors that failed (the scrape still answers).',
    ['collector'],
  );
}

/** switchboard_doorbell_unheard_sessions: live sessions carrying the unheard mark, read at scrape time. */
export function registerUnheardSessionsGauge(metrics: Metrics, db: Queryable): void {
  const errors = collectionErrors(metrics);
  new Gauge({
    name: 'switchboard_doorbell_unheard_sessions',
    help: 'Live MCP sessions marked unheard: their last 3 doorbells were delivered and none was heard.',
    registers: [metrics.registry],
    async collect() {
      try {
        this.set(await countUnheardSessions(db));
      } catch {
        errors.inc({ collector: 'doorbell_unheard_sessions' });
      }
    },
  });
}
