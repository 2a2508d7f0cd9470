// Putting a todo on a queue: validate everything first (nothing is written for bad
// input), then one idempotent insert whose todo_ready notice fires on commit.

import { AppError, invalidArgument } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import {
  LIMITS,
  PRIORITY_BOUNDS,
  createTodoInput,
  parseInput,
  type CreateTodoInput,
  type Todo,
} from '../domain/todo.js';
import { liveTodoLimit } from '../quotas/check.js';
import type { InsertTodoArgs } from '../store/todos.js';
import { statements } from './coalesce.js';
import { idempotencyWindow, type Sender, type TodoDeps } from './context.js';

/**
 * create_todo's arguments, as tools/list shows them: an agent's todo has no `source`,
 * which only the surfaces that ingest (API, board, webhooks) set.
 */
export const agentCreateTodoInput = createTodoInput.omit({ source: true });

export interface CreateTarget {
  endpointId: string;
  /** An agent creating on its own endpoint may only use its granted queues. */
  grantedQueues?: string[];
  /**
   * The todo's `source` when the surface sets it rather than the input: a hand-off's is the
   * sending endpoint's slug (docs/design/handoff.md).
   */
  source?: string;
}

export async function createTodo(
  deps: TodoDeps,
  target: CreateTarget,
  sender: Sender,
  input: unknown,
): Promise<{ todo: Todo; created: boolean }> {
  const agent = 'endpointId' in sender;
  // Named before anything else is checked, as an agent's one field it may never send.
  if (agent && typeof input === 'object' && input !== null && 'source' in input) {
    throw invalidArgument('source', 'is not a known field');
  }
  const data: CreateTodoInput = parseInput(agent ? agentCreateTodoInput : createTodoInput, input);
  if (target.grantedQueues && !target.grantedQueues.includes(data.queue)) {
    throw new AppError('forbidden', `queue: "${data.queue}" is not one of this endpoint's granted queues`, {
      field: 'queue',
      granted: target.grantedQueues,
    });
  }
  const args = insertArgs(target.endpointId, sender, data, deps.tracing?.traceparent() ?? null);
  if (target.source !== undefined) args.source = target.source;
  // The live-todo quota is checked with the insert. Coalesced with other creates of the
  // endpoint only on the plain path: a caller that hands a transaction's client writes more
  // in it and runs alone (docs/design/coalescing.md).
  const result = await statements(deps.db, deps.coalesce).insertTodo(
    args,
    idempotencyWindow(deps),
    liveTodoLimit(deps),
  );
  if (result.created) deps.metrics?.todosCreated.inc();
  return result;
}

/** The row a parsed create writes; the bulk create builds each of its rows with it too. */
export function insertArgs(
  endpointId: string,
  sender: Sender,
  data: CreateTodoInput,
  traceparent: string | null,
): InsertTodoArgs {
  return {
    traceparent,
    endpointId,
    id: newId('td'),
    queue: data.queue,
    title: data.title,
    body: data.body ?? '',
    payload: data.payload,
    kind: data.kind ?? null,
    source: data.source ?? null,
    createdByHumanId: 'humanId' in sender ? sender.humanId : null,
    createdByEndpointId: 'endpointId' in sender ? sender.endpointId : null,
    scheduleId: 'scheduleId' in sender ? sender.scheduleId : null,
    eventId: 'eventId' in sender ? (sender.eventId ?? null) : null,
    idempotencyKey: data.idempotency_key ?? null,
    maxAttempts: data.max_attempts ?? LIMITS.defaultMaxAttempts,
    priority: data.priority ?? PRIORITY_BOUNDS.default,
    notBefore: data.not_before === undefined ? null : new Date(data.not_before),
    retryBackoff: data.retry_backoff
      ? { baseSeconds: data.retry_backoff.base_seconds, maxSeconds: data.retry_backoff.max_seconds }
      : null,
  };
}
