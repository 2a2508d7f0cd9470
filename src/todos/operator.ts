// What a human does to a todo from the API, board or CLI: retry now, cancel. The
// caller has checked that the human may act on the endpoint.

import { AppError, notFound } from '../domain/errors.js';
import type { Todo, TodoAttempt } from '../domain/todo.js';
import { cancel as cancelRow, retryNow as retryRow } from '../store/todo-operator.js';
import { getTodo as getRow, listAttempts } from '../store/todos.js';
import { todoAnswers } from '../store/asks.js';
import type { TodoAnswer } from '../domain/asks.js';
import { zeroRowError, type TodoDeps } from './context.js';
import { withWaiting, type ReadTodo } from './waiting-read.js';
import { linksOfTodo, routeOf, type TodoLinks, type TodoRoute } from './read.js';

export async function retryNow(deps: TodoDeps, endpointId: string, id: string): Promise<{ todo: Todo }> {
  const todo = await retryRow(deps.db, endpointId, id);
  if (todo) return { todo };
  const row = await getRow(deps.db, { endpointId }, id);
  if (row && (row.state === 'failed' || row.state === 'canceled')) {
    // A retryable todo refused: its queue is no longer the endpoint's.
    throw new AppError(
      'conflict',
      `cannot retry: queue "${row.queue}" is no longer one of the endpoint's queues (add it back first)`,
      { id, state: row.state, queue: row.queue },
    );
  }
  throw await zeroRowError(deps, { endpointId }, id, 'retry');
}

export async function cancel(deps: TodoDeps, endpointId: string, id: string): Promise<{ todo: Todo }> {
  const todo = await cancelRow(deps.db, endpointId, id);
  if (todo) return { todo };
  throw await zeroRowError(deps, { endpointId }, id, 'cancel');
}

/** A todo with its attempt history and answered questions, for operators (all queues of the endpoint). */
export async function getTodoWithAttempts(
  deps: TodoDeps,
  endpointId: string,
  id: string,
): Promise<{ todo: ReadTodo; attempts: TodoAttempt[]; answers: TodoAnswer[]; links: TodoLinks; route?: TodoRoute }> {
  const row = await getRow(deps.db, { endpointId }, id);
  if (!row) throw notFound('todo', id);
  const [todo = row] = await withWaiting(deps.db, endpointId, [row]);
  const route = await routeOf(deps.db, row);
  const [attempts, answers, links] = await Promise.all([
    listAttempts(deps.db, endpointId, id),
    todoAnswers(deps.db, endpointId, id),
    linksOfTodo(deps.db, endpointId, id),
  ]);
  return { todo, attempts, answers, links, ...(route ? { route } : {}) };
}
