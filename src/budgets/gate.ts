// Doorbell gating (docs/design/admission.md, "Doorbell gating and the reopen"): the
// doorbell asks, before each ring pass, which of the endpoint's queues a budget holds
// back; it rings none of their todos, and marks their policies held so the reopen sends
// the one push owed when the queue admits again. An endpoint without policies costs one
// indexed miss.

import type { Queryable } from '../db/pool.js';
import { holdPolicies } from './reopen.js';
import { deferredQueues } from './status.js';

/** The endpoint's deferred queues, each marked as owing a push. */
export async function holdDeferred(db: Queryable, endpointId: string): Promise<string[]> {
  const deferred = await deferredQueues(db, endpointId);
  await holdPolicies(db, deferred);
  return deferred.map((d) => d.queue);
}
