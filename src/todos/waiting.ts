// Why a todo waits (docs/design/todos.md, "Why is it waiting"): the pure derivation of the
// `waiting` object from facts a read gathered once — the endpoint's presence columns, its
// queues and whether a session is live, the budget statuses of its queues
// (src/budgets/status.ts, never re-derived here), and each todo's claim-order keys and
// count ahead (src/store/todo-waiting.ts). One reason is chosen, by this precedence:
//
//   scheduled > retry_backoff > presence_out > deferred > no_consumer > queued
//
// The first two say the todo itself is not ready yet, so nothing about its queue matters
// until then. Of the queue-wide holds, the widest comes first: presence holds every queue
// of the endpoint, a budget one queue, and a missing consumer is what is left once neither
// holds. `queued` is the normal state of ready work. Reads nothing, stores nothing.

import type { QueueStatus } from '../admission/status.js';
import type { Todo } from '../domain/todo.js';
import { aheadOf, type Waiting } from '../domain/waiting.js';
import { effectivePresence, type PresenceColumns } from '../presence/evaluate.js';

/** What a read knows about the endpoint, once per request. */
export interface EndpointFacts extends PresenceColumns {
  now: Date;
  queues: string[];
  has_session: boolean;
}

/** A todo's claim-order keys, read with it. */
export interface OrderKeys {
  /** ready_at has come: the todo is in the claim order. */
  ready: boolean;
  ready_at: Date | null;
  not_before: Date | null;
  /** The count ahead read with a cap, when it was read. */
  ahead: number | null;
}

type Row = Pick<Todo, 'state' | 'synthetic' | 'next_retry_at' | 'attempt' | 'max_attempts' | 'queue'>;

/**
 * Whether a todo can carry `waiting`: pending, or failed with a retry still coming. A
 * self-test's synthetic todo is claimed by id, never from a queue, so it has none.
 */
export function mayWait(t: Row): boolean {
  if (t.synthetic) return false;
  if (t.state === 'pending') return true;
  return t.state === 'failed' && t.next_retry_at !== null && t.attempt < t.max_attempts;
}

/** A shift boundary or override end a step ahead: an override may end on an off-shift hour. */
const PRESENCE_STEPS = 3;

/** The instant the endpoint is next `in`, from `now` when it is out; null when unknown. */
function nextIn(facts: EndpointFacts): Date | null {
  let at = facts.now;
  for (let step = 0; step < PRESENCE_STEPS; step++) {
    const p = effectivePresence(facts, at);
    if (p.presence === 'in') return at;
    if (!p.until) return null;
    at = p.until;
  }
  return effectivePresence(facts, at).presence === 'in' ? at : null;
}

/**
 * What holds a queue's ready work back, by the precedence above, or null when nothing
 * does (its todos are `queued`, and only then is the count ahead worth reading).
 */
export function queueHold(facts: EndpointFacts, queue: string, status: QueueStatus | undefined): Waiting | null {
  if (effectivePresence(facts, facts.now).presence === 'out') {
    return { reason: 'presence_out', until: nextIn(facts)?.toISOString() ?? null };
  }
  if (status && status.status.state === 'deferred') {
    return {
      reason: 'deferred',
      until: status.status.next_eligible_at,
      exact: status.status.exact,
      budget: status.status.reason ?? 'admission_unavailable',
      usage: status.usage,
    };
  }
  if (!facts.has_session || !facts.queues.includes(queue)) return { reason: 'no_consumer' };
  return null;
}

/** The todo's `waiting`, or undefined when it has none (claimed, done, canceled, dead). */
export function waitingOf(t: Row, keys: OrderKeys | undefined, hold: Waiting | null): Waiting | undefined {
  if (!mayWait(t) || !keys) return undefined;
  if (!keys.ready) {
    if (t.state === 'failed' && t.next_retry_at)
      return { reason: 'retry_backoff', until: t.next_retry_at.toISOString() };
    return { reason: 'scheduled', until: (keys.ready_at ?? keys.not_before)?.toISOString() ?? null };
  }
  if (hold) return hold;
  return { reason: 'queued', ahead: aheadOf(keys.ahead ?? 0) };
}
