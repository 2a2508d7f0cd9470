// Derived admission status (docs/design/admission.md, "Derived deferral, never stored"):
// what a queue's policy says at the instant it is read — open or deferred, why, until
// when — and the `admission` object pending todos of a budgeted queue carry. Nothing here
// is stored; every read computes it from the policy, the counters and the database clock.

import type { Queryable } from '../db/pool.js';
import { countersOf, policyStates, type PolicyState } from '../store/admission.js';
import { decide, policyView, type DeferReason, type Usage } from './policy.js';

export interface TodoAdmission {
  state: 'admissible' | 'deferred';
  reason: DeferReason | null;
  next_eligible_at: string | null;
  exact: boolean;
}

export interface QueueStatus {
  queue: string;
  policy: ReturnType<typeof policyView>;
  status: TodoAdmission;
  usage: Usage | null;
  pending: number;
}

export function statusOf(state: PolicyState): QueueStatus {
  const d = decide(state, countersOf(state), state.at);
  const status: TodoAdmission = d.admit
    ? { state: 'admissible', reason: null, next_eligible_at: null, exact: true }
    : { state: 'deferred', reason: d.reason, next_eligible_at: d.next_eligible_at, exact: d.exact };
  return { queue: state.queue, policy: policyView(state), status, usage: d.usage, pending: state.pending };
}

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
  const queues = [...new Set(todos.filter((t) => t.state === 'pending').map((t) => t.queue))];
  if (queues.length === 0) return todos;
  const statuses = await queueStatuses(db, endpointId, queues);
  if (statuses.size === 0) return todos;
  return todos.map((t) => {
    const s = t.state === 'pending' ? statuses.get(t.queue) : undefined;
    return s ? { ...t, admission: s.status } : t;
  });
}

/** The endpoint's queues a budget holds back right now (the doorbell rings none of them). */
export async function deferredQueues(
  db: Queryable,
  endpointId: string,
): Promise<Array<{ queue: string; policyId: string }>> {
  const states = await policyStates(db, endpointId, null);
  return states.filter((s) => statusOf(s).status.state === 'deferred').map((s) => ({ queue: s.queue, policyId: s.id }));
}
