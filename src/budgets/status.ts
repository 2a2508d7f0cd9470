// Admission status reads (docs/design/admission.md, "Derived deferral, never stored"): the
// policy states of an endpoint's budgeted queues, read from the store, turned into
// statuses by the pure src/admission/status.ts. Used wherever todos are read (pending
// todos of a budgeted queue carry `admission`), by the doorbell's gate and by the notify
// hooks' push check.

import type { Queryable } from '../db/pool.js';
import {
  annotate,
  deferredOf,
  pendingQueues,
  statusOf,
  type QueueStatus,
  type TodoAdmission,
} from '../admission/status.js';
import { policyStates } from '../store/admission.js';

/** Statuses of the endpoint's budgeted queues (optionally only these), by queue. */
export async function queueStatuses(
  db: Queryable,
  endpointId: string,
  queues: string[] | null,
): Promise<Map<string, QueueStatus>> {
  const states = await policyStates(db, endpointId, queues);
  return new Map(states.map((s) => [s.queue, statusOf(s)]));
}

/**
 * The todos, with `admission` on each pending one whose queue has a policy. One indexed
 * read of the endpoint's policies; todos of queues without one are returned untouched.
 */
export async function withAdmission<T extends { queue: string; state: string }>(
  db: Queryable,
  endpointId: string,
  todos: T[],
): Promise<Array<T & { admission?: TodoAdmission }>> {
  const queues = pendingQueues(todos);
  if (queues.length === 0) return todos;
  return annotate(todos, await queueStatuses(db, endpointId, queues));
}

/** The endpoint's queues a budget holds back right now (the doorbell rings none of them). */
export async function deferredQueues(
  db: Queryable,
  endpointId: string,
): Promise<Array<{ queue: string; policyId: string; until: string | null }>> {
  return deferredOf(await policyStates(db, endpointId, null));
}
