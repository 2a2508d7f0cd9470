// Whether ready work on a queue may be pushed (doorbell digest, notify hooks) right now.
// Synthetic todos are already excluded in SQL (todos.synthetic); this is the one place
// that also consults admission control: a deferred queue (docs/design/admission.md) is
// never pushed. Read-only: the doorbell's gate marks policies held, so the reopen's
// `todo_ready` announces the work again when the queue admits, and the hooks fire then.

import { deferredQueues } from '../budgets/status.js';
import type { Queryable } from '../db/pool.js';

export async function isPushEligible(db: Queryable, endpointId: string, queue: string): Promise<boolean> {
  return !(await deferredQueues(db, endpointId)).some((d) => d.queue === queue);
}
