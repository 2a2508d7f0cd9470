// The doorbell series (docs/design/doorbell-acknowledgement.md). "Delivered" and "heard"
// are different words here too: rings_total counts rings written to a stream (delivered);
// acknowledged_total counts rings a claim or ack_doorbell proved heard within the window;
// unheard_total counts rings the window closed on. sent = acknowledged + unheard + open
// holds over the rows; the counters move once per ring, after the statement that decided
// it committed. Self-test (synthetic) rings are counted by none of them: the test never
// pollutes metrics.

import type { Counter, Registry } from 'prom-client';
import { combinations, counter, zero, type Collector } from './define.js';

export interface RingCounted {
  kind: string;
  synthetic: boolean;
}

/** `metrics.doorbell`: built once, by the Metrics constructor. */
export class DoorbellCounters {
  readonly rings: Counter<'kind'>;
  readonly acknowledged: Counter<'kind' | 'via'>;
  readonly unheard: Counter<'kind'>;
  readonly dropped: Counter<'reason'>;

  constructor(registry: Registry) {
    this.rings = counter(
      registry,
      'switchboard_doorbell_rings_total',
      'Doorbell rings delivered: written to a session stream (not proof that anyone heard them).',
      ['kind'],
    );
    this.acknowledged = counter(
      registry,
      'switchboard_doorbell_rings_acknowledged_total',
      'Doorbell rings heard: acknowledged by a claim or ack_doorbell within the ack window.',
      ['kind', 'via'],
    );
    this.unheard = counter(
      registry,
      'switchboard_doorbell_rings_unheard_total',
      'Doorbell rings delivered but not heard: no claim or ack within the ack window.',
      ['kind'],
    );
    this.dropped = counter(
      registry,
      'switchboard_doorbell_ring_records_dropped_total',
      'Ring records the ring writer dropped (the doorbell itself was delivered): overflow or a failed insert.',
      ['reason'],
    );
    // Self-test rings count in none, so their kind never appears.
    zero(this.rings, combinations({ kind: ['todo', 'digest'] }));
    zero(this.unheard, combinations({ kind: ['todo', 'digest'] }));
    zero(this.acknowledged, combinations({ kind: ['todo', 'digest'], via: ['claim', 'ack'] }));
    zero(this.dropped, combinations({ reason: ['overflow', 'error'] }));
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

/** switchboard_doorbell_unheard_sessions: live sessions carrying the unheard mark; the read counts them. */
export const UNHEARD_SESSIONS: Collector<number> = {
  name: 'doorbell_unheard_sessions',
  gauges: [
    {
      name: 'switchboard_doorbell_unheard_sessions',
      help: 'Live MCP sessions marked unheard: their last 3 doorbells were delivered and none was heard.',
      fill: (gauge, sessions) => gauge.set(sessions),
    },
  ],
};
