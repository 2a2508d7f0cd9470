// Derived admission status (docs/design/admission.md, "Derived deferral, never stored"):
// what a queue's policy says at the instant it is read — open or deferred, why, until
// when — and the `admission` object pending todos of a budgeted queue carry. Nothing here
// is stored or read: every status is computed from a policy state (the policy, its
// counters and the database clock) that the caller read (src/budgets/status.ts).

import { countersOf, type PolicyState } from '../domain/admission.js';
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

/** The pending queues among these todos: the only ones whose policy a read needs. */
export function pendingQueues(todos: Array<{ queue: string; state: string }>): string[] {
  return [...new Set(todos.filter((t) => t.state === 'pending').map((t) => t.queue))];
}

/** The todos, with `admission` on each pending one whose queue has a status; the rest untouched. */
export function annotate<T extends { queue: string; state: string }>(
  todos: T[],
  statuses: Map<string, QueueStatus>,
): Array<T & { admission?: TodoAdmission }> {
  if (statuses.size === 0) return todos;
  return todos.map((t) => {
    const s = t.state === 'pending' ? statuses.get(t.queue) : undefined;
    return s ? { ...t, admission: s.status } : t;
  });
}

/** The policies among these that hold their queue back right now (the doorbell rings none of them). */
export function deferredOf(states: PolicyState[]): Array<{ queue: string; policyId: string; until: string | null }> {
  return states.flatMap((s) => {
    const { status } = statusOf(s);
    // Only an exact end (a window's rollover) bounds the mark: an in-flight deferral ends
    // when a claim settles, and that settle is what reopens it.
    const until = status.exact ? status.next_eligible_at : null;
    return status.state === 'deferred' ? [{ queue: s.queue, policyId: s.id, until }] : [];
  });
}
