// What admission (docs/design/admission.md) adds to the claim answers: the headroom of a
// successful claim, the `deferred` error of a refused claim, the deferred summary of an
// empty claim_next, and the counters moved after each (claimed and charged after commit,
// refused after the refusal). Queues without a policy get none of it.

import type { DeferReason, Usage } from '../admission/policy.js';
import type { TodoAnswer } from '../domain/asks.js';
import { AppError } from '../domain/errors.js';
import type { Todo } from '../domain/todo.js';
import { pendingByQueue } from '../store/admission.js';
import type { PriorAttempt } from '../store/claims.js';
import type { Claimed, Refusal } from './claim-loop.js';
import type { TodoDeps } from './context.js';

export type AdmissionUsage = Usage;

export interface DeferredEntry {
  queue: string;
  reason: DeferReason;
  pending: number;
  next_eligible_at: string | null;
  exact: boolean;
}

/**
 * The answer of a committed claim, counted: every claim by queue, its attempt, a
 * takeover, its charge, the rings the claim statement acknowledged, how long the todo
 * waited ready and how long each of its rings waited for this claim (both observed only
 * when the caller knows the endpoint's slug, their label).
 */
export function admitted(deps: TodoDeps, claimed: Claimed, endpointSlug: string | undefined): ClaimAnswer {
  const {
    taken_over: takenOver,
    waited_seconds: waited,
    rings,
    traceparent,
    lease_token: leaseToken,
    prior_attempts: prior,
    answers,
    ...todo
  } = claimed.todo;
  // The claim's span (the verb's, active here) links to the trace that made the todo.
  deps.tracing?.linkActive(traceparent);
  const { metrics } = deps;
  if (metrics) {
    if (rings) metrics.doorbell.acked(rings, 'claim');
    const queue = metrics.queueLabel(todo.queue);
    if (endpointSlug !== undefined) {
      metrics.latency.queueWait.observe({ endpoint: metrics.endpointLabel(endpointSlug), queue }, waited);
      // Doorbell delivery from the rings the claim statement itself acknowledged, each with
      // its acked_at - sent_at (0024_claim_ack_delivery.sql): no query is added to the
      // claim. One observation per todo ring, late (unheard) ones included: a histogram
      // that dropped its slowest samples would understate the tail it exists to show. A
      // ring recorded only after this claim is observed by the ring writer instead.
      for (const r of rings ?? []) {
        if (r.kind === 'todo' && !r.synthetic && typeof r.delivery_seconds === 'number') {
          metrics.doorbellDelivered(endpointSlug, todo.queue, r.delivery_seconds);
        }
      }
    }
    metrics.todosClaimed.inc({ queue });
    metrics.todoAttempts.inc();
    // A takeover closes a lapsed lease the reaper had not reached yet.
    if (takenOver > 0) metrics.leaseExpirations.inc();
    if (claimed.charged) metrics.admission.charged.inc({ queue });
  }
  // The question the last attempt asked went unanswered (docs/design/ask-human.md).
  const timedOut = prior[0]?.ask?.timed_out === true ? { timed_out: true as const } : {};
  const answer = { todo, lease_token: leaseToken, prior_attempts: prior, answers, ...timedOut };
  return claimed.admission ? { ...answer, admission: claimed.admission } : answer;
}

/** A claim as the claim verbs answer it (ClaimResult in ./claim.ts). */
interface ClaimAnswer {
  todo: Todo;
  lease_token: string;
  prior_attempts: PriorAttempt[];
  answers: TodoAnswer[];
  timed_out?: true;
  admission?: Usage;
}

export function countRefusals(deps: TodoDeps, refused: Refusal[]): void {
  const { metrics } = deps;
  if (!metrics) return;
  for (const r of refused) {
    metrics.admission.refused.inc({ queue: metrics.queueLabel(r.queue), reason: r.decision.reason });
  }
}

/** `deferred` (or `admission_unavailable` for an unknown zone) for a refused claim. */
export function deferredError(deps: TodoDeps, refused: Refusal): AppError {
  countRefusals(deps, [refused]);
  const d = refused.decision;
  if (d.reason === 'admission_unavailable') {
    return new AppError(
      'admission_unavailable',
      `queue ${refused.queue}: its budget cannot be evaluated (unknown time zone); nothing is admitted until an owner fixes it`,
      { queue: refused.queue, reason: d.reason },
    );
  }
  const when = d.next_eligible_at ? `; try again at ${d.next_eligible_at}` : '';
  return new AppError(
    'deferred',
    `queue ${refused.queue} is over its budget (${d.reason})${when}: do not pick another todo for it`,
    {
      queue: refused.queue,
      reason: d.reason,
      next_eligible_at: d.next_eligible_at,
      exact: d.exact,
    },
  );
}

/** One entry per queue a budget held back during this claim_next, with its pending count. */
export async function deferredSummary(
  deps: TodoDeps,
  endpointId: string,
  refused: Refusal[],
): Promise<DeferredEntry[]> {
  if (refused.length === 0) return [];
  const pending = await pendingByQueue(
    deps.db,
    endpointId,
    refused.map((r) => r.queue),
  );
  return refused.map((r) => ({
    queue: r.queue,
    reason: r.decision.reason,
    pending: pending.get(r.queue) ?? 0,
    next_eligible_at: r.decision.next_eligible_at,
    exact: r.decision.exact,
  }));
}
