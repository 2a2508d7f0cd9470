// A human's view of the todos on their endpoints: push, list, show with attempts,
// retry now, cancel, answer. Ownership is resolved first; a todo on another human's endpoint is
// not_found exactly like an unknown id.

import { AppError, invalidArgument, notFound } from '../domain/errors.js';
import type { Todo } from '../domain/todo.js';
import type { Endpoint } from '../store/endpoints.js';
import { findTodoEndpoint } from '../store/todos.js';
import {
  answerTodo,
  cancel,
  createTodo,
  getTodoWithAttempts,
  listTodos,
  retryNow,
  type Answerer,
  type TodoDeps,
} from '../todos/index.js';
import { resolveEndpoint, type EndpointDeps } from './manage.js';

export type OperatorDeps = EndpointDeps & TodoDeps;

/** The human's endpoint named by `ref`, when it still takes work; else not_found or conflict. */
export async function workingEndpoint(deps: OperatorDeps, humanId: string, ref: string, now: Date): Promise<Endpoint> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  if (endpoint.revoked_at || (endpoint.expires_at && endpoint.expires_at <= now)) {
    throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked or expired: it takes no new work`, {
      id: endpoint.id,
    });
  }
  return endpoint;
}

export async function pushTodo(
  deps: OperatorDeps,
  humanId: string,
  ref: string,
  input: unknown,
  now: Date,
): Promise<{ todo: Todo; created: boolean }> {
  const endpoint = await workingEndpoint(deps, humanId, ref, now);
  const queue = (input as { queue?: unknown } | null)?.queue;
  if (typeof queue === 'string' && !endpoint.queues.includes(queue)) {
    throw invalidArgument(
      'queue',
      `"${queue}" is not one of ${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
    );
  }
  const withSource = input && typeof input === 'object' && !('source' in input) ? { ...input, source: 'api' } : input;
  return createTodo(deps, { endpointId: endpoint.id }, { humanId }, withSource);
}

export async function listEndpointTodos(deps: OperatorDeps, humanId: string, ref: string, input: unknown) {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return listTodos(deps, { endpointId: endpoint.id }, input);
}

async function endpointOfTodo(deps: OperatorDeps, humanId: string, id: string): Promise<string> {
  const endpointId = await findTodoEndpoint(deps.db, humanId, id);
  if (!endpointId) throw notFound('todo', id);
  return endpointId;
}

export async function showTodo(
  deps: OperatorDeps,
  humanId: string,
  id: string,
): ReturnType<typeof getTodoWithAttempts> {
  return getTodoWithAttempts(deps, await endpointOfTodo(deps, humanId, id), id);
}

export async function retryTodo(deps: OperatorDeps, humanId: string, id: string): Promise<{ todo: Todo }> {
  return retryNow(deps, await endpointOfTodo(deps, humanId, id), id);
}

export async function cancelTodo(deps: OperatorDeps, humanId: string, id: string): Promise<{ todo: Todo }> {
  return cancel(deps, await endpointOfTodo(deps, humanId, id), id);
}

/** Answers the question a todo of one of the human's endpoints waits on (docs/design/ask-human.md). */
export async function answerHumanTodo(
  deps: OperatorDeps,
  human: Answerer,
  id: string,
  input: unknown,
): Promise<{ todo: Todo }> {
  return answerTodo(deps, await endpointOfTodo(deps, human.id, id), id, human, input);
}
