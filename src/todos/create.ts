// Putting a todo on a queue: validate everything first (nothing is written for bad
// input), then one idempotent insert whose todo_ready notice fires on commit.

import { AppError, invalidArgument } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { LIMITS, createTodoInput, parseInput, type CreateTodoInput, type Todo } from '../domain/todo.js';
import { insertTodo } from '../store/todos.js';
import type { Sender, TodoDeps } from './context.js';

/**
 * create_todo's arguments, as tools/list shows them: an agent's todo has no `source`,
 * which only the surfaces that ingest (API, board, webhooks) set.
 */
export const agentCreateTodoInput = createTodoInput.omit({ source: true });

export interface CreateTarget {
  endpointId: string;
  /** An agent creating on its own endpoint may only use its granted queues. */
  grantedQueues?: string[];
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
  const result = await insertTodo(deps.db, {
    endpointId: target.endpointId,
    id: newId('td'),
    queue: data.queue,
    title: data.title,
    body: data.body ?? '',
    payload: data.payload,
    kind: data.kind ?? null,
    source: data.source ?? null,
    createdByHumanId: 'humanId' in sender ? sender.humanId : null,
    createdByEndpointId: 'endpointId' in sender ? sender.endpointId : null,
    idempotencyKey: data.idempotency_key ?? null,
    maxAttempts: data.max_attempts ?? LIMITS.defaultMaxAttempts,
  });
  if (result.created) deps.metrics?.todosCreated.inc();
  return result;
}
