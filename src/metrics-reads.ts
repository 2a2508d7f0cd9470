// The database reads behind the scrape-time gauges. src/metrics/ defines every series and
// reads nothing itself; the composition root attaches these reads to the registry
// (`collectFromDatabase`), so every instance reports what the database holds.

import { decide } from './admission/policy.js';
import type { Queryable } from './db/pool.js';
import { ADMISSION, type AdmissionSample } from './metrics/admission.js';
import { UNHEARD_SESSIONS } from './metrics/doorbell.js';
import type { Metrics } from './metrics/index.js';
import { OLDEST_PENDING, QUEUE_TODOS } from './metrics/queues.js';
import { allPolicyStates, countersOf } from './store/admission.js';
import { countUnheardSessions } from './store/doorbell-rings.js';
import { endpointSlugs } from './store/endpoints.js';
import { oldestPendingAges, queueStateCounts } from './store/queue-stats.js';

/** Policies read per scrape: one row each; far above any real install's count. */
const COLLECT_LIMIT = 10_000;

/** Every policy with its counters and its decision, read at one instant (the database clock). */
export async function admissionSamples(db: Queryable, limit = COLLECT_LIMIT): Promise<AdmissionSample[]> {
  const states = await allPolicyStates(db, limit);
  const slugs = await endpointSlugs(db, [...new Set(states.map((s) => s.endpoint_id))]);
  return states.map((s) => ({
    endpoint: slugs.get(s.endpoint_id) ?? s.endpoint_id,
    queue: s.queue,
    in_flight: s.in_flight,
    max_claims_per_window: s.max_claims_per_window,
    pending: s.pending,
    decision: decide(s, countersOf(s), s.at),
  }));
}

/** Attaches every scrape-time collector to this registry, each reading `db`. Once per registry. */
export function collectFromDatabase(metrics: Metrics, db: Queryable): void {
  metrics.collect(QUEUE_TODOS, () => queueStateCounts(db));
  metrics.collect(OLDEST_PENDING, () => oldestPendingAges(db));
  metrics.collect(ADMISSION, () => admissionSamples(db));
  metrics.collect(UNHEARD_SESSIONS, () => countUnheardSessions(db));
}
