// Who is acting, and what the use cases need. Surfaces build these from an
// authenticated request; the use cases trust them and scope every statement by them.

import type { Queryable } from '../db/pool.js';
import { AppError, notFound } from '../domain/errors.js';
import type { TodoState } from '../domain/todo.js';
import type { Metrics } from '../metrics/index.js';
import { probeTodo, type TodoScope } from '../store/todos.js';

export interface TodoDeps {
  /** A pool, or a transaction's client when the caller writes more in the same transaction. */
  db: Queryable;
  /** The server default lease, used when neither the call nor the endpoint sets one. */
  defaultLeaseSeconds: number;
  /** Counted after commit; absent in tests that do not read metrics. */
  metrics?: Metrics;
}

/** One MCP session of an endpoint: sees and claims only its granted queues. */
export interface Agent {
  endpointId: string;
  sessionId: string;
  queues: string[];
  defaultLeaseSeconds: number | null;
}

/**
 * Who put a todo on a queue: a human (API, board, CLI), an endpoint (MCP), or a token
 * webhook (the unguessable URL is the credential; `source` says which).
 */
export type Sender = { humanId: string } | { endpointId: string } | { webhookId: string };

/**
 * Classifies a conditional update that matched no row: not_found when the todo is absent
 * or outside the caller's scope (another endpoint's todo answers exactly like an unknown
 * id), conflict when it exists in the wrong state or is held by another session.
 */
export async function zeroRowError(
  deps: TodoDeps,
  scope: TodoScope,
  id: string,
  verb: string,
  sessionId?: string,
): Promise<AppError> {
  const found = await probeTodo(deps.db, scope, id);
  if (!found) return notFound('todo', id);
  return new AppError('conflict', conflictMessage(verb, found.state, found.owner_session_id, sessionId), {
    id,
    state: found.state,
  });
}

function conflictMessage(verb: string, state: TodoState, owner: string | null, sessionId: string | undefined): string {
  if (state === 'claimed' && sessionId !== undefined && owner !== sessionId) {
    return `cannot ${verb}: the todo is claimed by another session (you lost it; do not continue its work)`;
  }
  return `cannot ${verb}: the todo is ${state}`;
}
