// Who is acting, and what the use cases need. Surfaces build these from an
// authenticated request; the use cases trust them and scope every statement by them.

import type { Queryable } from '../db/pool.js';
import { DEFAULT_ATTEMPTS_KEPT } from '../domain/attempts.js';
import { AppError, notFound } from '../domain/errors.js';
import type { Metrics } from '../metrics/index.js';
import { probeTodo, type Holder, type TodoProbe, type TodoScope } from '../store/todos.js';
import type { QuotaDeps } from '../quotas/check.js';
import type { Tracing } from '../tracing/index.js';
import type { AskedEvent } from '../domain/asks.js';
import type { Coalescing } from './coalesce.js';

export interface TodoDeps extends QuotaDeps {
  /** A pool, or a transaction's client when the caller writes more in the same transaction. */
  db: Queryable;
  /** The server default lease, used when neither the call nor the endpoint sets one. */
  defaultLeaseSeconds: number;
  /** Counted after commit; absent in tests that do not read metrics. */
  metrics?: Metrics;
  /**
   * How long a terminal todo keeps its idempotency key (SWITCHBOARD_IDEMPOTENCY_WINDOW), in
   * seconds; absent: DEFAULT_IDEMPOTENCY_WINDOW_SECONDS, the server's default.
   */
  idempotencyWindowSeconds?: number;
  /** Attempts kept per todo (SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO); absent: DEFAULT_ATTEMPTS_KEPT. */
  keepAttempts?: number;
  /**
   * The instance's traces: a create stores the active trace context on the todo, and the
   * verbs that act on it link their span to it (docs/design/tracing.md, "A todo's trace").
   * Absent: untraced.
   */
  tracing?: Tracing;
  /**
   * Told after a claim settles (complete, fail, release): the doorbell rings the session
   * for waiting work if it stays idle (docs/design/doorbell-acknowledgement.md, "Who is
   * rung"). Absent: nothing is told.
   */
  settled?: (endpointId: string, sessionId: string) => void;
  /**
   * ask_human's timeouts: the default and the longest an agent may ask for
   * (SWITCHBOARD_ASK_HUMAN_TIMEOUT, _MAX_TIMEOUT). Absent: DEFAULT_ASK_SETTINGS.
   */
  asks?: { defaultSeconds: number; maxSeconds: number };
  /**
   * Told after an agent parked a todo on a question: the notify hooks carry it to the
   * owner (todo.waiting_on_human, docs/design/ask-human.md). Absent: nobody is told.
   */
  asked?: (event: AskedEvent) => void;
  /**
   * The instance's group-commit lanes over the claim, settle and create statements
   * (docs/design/coalescing.md), used only when `db` is their pool. Absent or null: each
   * call runs its own statement.
   */
  coalesce?: Coalescing | null;
}

/** A day: a client retrying a create after an outage of hours still finds its todo. */
export const DEFAULT_IDEMPOTENCY_WINDOW_SECONDS = 86_400;

export function keepAttempts(deps: TodoDeps): number {
  return deps.keepAttempts ?? DEFAULT_ATTEMPTS_KEPT;
}

export function idempotencyWindow(deps: TodoDeps): number {
  return deps.idempotencyWindowSeconds ?? DEFAULT_IDEMPOTENCY_WINDOW_SECONDS;
}

/** One MCP session of an endpoint: sees and claims only its granted queues. */
export interface Agent {
  endpointId: string;
  sessionId: string;
  queues: string[];
  defaultLeaseSeconds: number | null;
  /**
   * The endpoint's slug: the `endpoint` label of the latency histograms. The MCP surface
   * always sets it; an in-process caller without it is left out of those histograms.
   */
  endpointSlug?: string;
}

/**
 * Who puts a todo on a queue: a human (API, board, CLI), an endpoint (MCP), a schedule
 * (its todos are its creator's), or a webhook delivery (the URL, and for a signed
 * provider its signature, is the credential; the todo names the event it came from).
 */
export type Sender =
  | { humanId: string }
  | { humanId: string; scheduleId: string }
  | { endpointId: string }
  | { webhookId: string; eventId?: string };

/**
 * Classifies a conditional update that matched no row: not_found when the todo is absent
 * or outside the caller's scope (another endpoint's todo answers exactly like an unknown
 * id), conflict when it exists in the wrong state or is held by another session. For an
 * owner verb (a holder given: the calling session, or the lease token it passed) the
 * message says which, so the agent knows what to do: it never held the todo, its lease
 * lapsed and another claim took it over, or the todo was put back or settled meanwhile.
 */
export async function zeroRowError(
  deps: TodoDeps,
  scope: TodoScope,
  id: string,
  verb: string,
  holder?: Holder,
): Promise<AppError> {
  const found = await probeTodo(deps.db, scope, id, holder);
  if (!found) return notFound('todo', id);
  const message =
    holder === undefined ? `cannot ${verb}: the todo is ${found.state}` : ownerMessage(verb, found, holder);
  return new AppError('conflict', message, { id, state: found.state });
}

const LOST = 'you lost it; do not continue its work';

function ownerMessage(verb: string, found: TodoProbe, holder: Holder): string {
  const { state, my_outcome: mine } = found;
  const byToken = 'leaseToken' in holder;
  const claimedElsewhere =
    state === 'claimed' && (byToken ? !found.current : found.owner_session_id !== holder.sessionId);
  if (mine === undefined) return neverHeld(verb, state, claimedElsewhere, byToken);
  if (claimedElsewhere) {
    return `cannot ${verb}: your lease lapsed and the todo is now claimed ${byToken ? 'under another lease' : 'by another session'} (${LOST})`;
  }
  switch (mine) {
    case 'lease_expired':
      return (
        `cannot ${verb}: your lease lapsed (the todo is now ${state}; ${LOST}` +
        `${state === 'pending' ? ', or claim it again' : ''})`
      );
    case 'released':
      return `cannot ${verb}: you released the todo (now ${state}); claim it again to work on it`;
    case 'completed':
      return `cannot ${verb}: you already completed the todo (it is ${state})`;
    case 'failed':
      return `cannot ${verb}: you already failed the todo (it is ${state})`;
    case 'canceled':
      return `cannot ${verb}: a human canceled the todo (${LOST})`;
    case 'asked':
      return (
        `cannot ${verb}: you asked a human about this todo (it is ${state}); ` +
        'its next claim carries the answer: claim it again then'
      );
    case 'revoked':
      return `cannot ${verb}: the endpoint was revoked and the todo dead-lettered (${LOST})`;
    default:
      return `cannot ${verb}: the todo is ${state}`;
  }
}

function neverHeld(verb: string, state: string, claimedElsewhere: boolean, byToken: boolean): string {
  const now = claimedElsewhere
    ? `the todo is claimed ${byToken ? 'under another lease' : 'by another session'}`
    : `the todo is ${state}`;
  const first = state === 'pending' ? '; claim it first' : '';
  if (byToken) {
    return (
      `cannot ${verb}: ${now}, and this lease token names no claim of it (a token is good only for the todo ` +
      `whose claim answered it)${first}`
    );
  }
  return (
    `cannot ${verb}: ${now}, and this session never held it. Only the session holding a claim, or a call ` +
    `passing the claim's lease_token, can heartbeat, complete, fail or release it${first}`
  );
}
