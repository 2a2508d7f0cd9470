// Whether ready work on a queue may be pushed (doorbell digest, notify hooks) right now.
// Synthetic todos are already excluded in SQL (todos.synthetic); this is the one place
// that must also consult admission control: a deferred queue (seed 000) is never pushed.

import type { Queryable } from '../db/pool.js';

// merge: admission/synthetic — when issue 5 (admission budgets) lands, answer false for a
// queue whose budget defers its pending work (the derived deferral of seed 000), e.g.
// `!(await deferredQueues(db, endpointId)).some((d) => d.queue === queue)` with
// deferredQueues from src/admission/status.ts. Read-only: it must not mark policies held.
export async function isPushEligible(_db: Queryable, _endpointId: string, _queue: string): Promise<boolean> {
  return true;
}
