// Reading todos: one by id, or a newest-first page. Agents see their granted queues
// only; operators see every queue of the endpoint. Pending todos of a budgeted queue
// carry their derived `admission` status (docs/design/admission.md), and every todo that
// waits its derived `waiting` (docs/design/todos.md, "Why is it waiting").

import { z } from 'zod';
import { invalidArgument, notFound } from '../domain/errors.js';
import { isId } from '../domain/ids.js';
import { LIMITS, listTodosInput, parseInput, todoId, type TodoAttempt } from '../domain/todo.js';
import { getTodo as getRow, listAttempts, listTodos as listRows } from '../store/todos.js';
import { routeOfTodo } from '../store/webhook-events.js';
import { linksOf, type ChildLink, type ParentLink } from '../store/todo-links.js';
import { todoAnswers } from '../store/asks.js';
import type { TodoAnswer } from '../domain/asks.js';
import type { Queryable } from '../db/pool.js';
import type { TodoDeps } from './context.js';
import { withWaiting, type ReadTodo } from './waiting-read.js';

/** get_todo's arguments, as tools/list shows them. */
export const getTodoInput = z.strictObject({ id: todoId });
/** list_todos' arguments (src/domain/todo.ts). */
export { listTodosInput };

export interface ReadScope {
  endpointId: string;
  /** Set for agents: the granted queues. Unset for operators. */
  queues?: string[];
}

/** How a webhook event's rules made this todo (docs/design/routing.md, "The trace"). */
export interface TodoRoute {
  event_id: string;
  disposition: string;
  steps: unknown[];
}

/**
 * The routing trace of a todo a webhook event made: the rule's decision and this todo's
 * own route step, not the event's other targets (another endpoint's todos). Undefined for
 * a todo no event made.
 */
export async function routeOf(
  db: Queryable,
  todo: { id: string; event_id: string | null },
): Promise<TodoRoute | undefined> {
  if (todo.event_id === null) return undefined;
  return (await routeOfTodo(db, { eventId: todo.event_id, todoId: todo.id })) ?? undefined;
}

/**
 * A todo's lineage (docs/design/handoff.md, "Lineage"): the todo it was handed from, and
 * the todos handed from it (the first LINKS_SHOWN).
 */
export interface TodoLinks {
  parent?: ParentLink;
  children: ChildLink[];
}

/** Children shown per todo: a fan-out wider than this is read from the children's own queues. */
const LINKS_SHOWN = 100;

export async function linksOfTodo(db: Queryable, endpointId: string, id: string): Promise<TodoLinks> {
  const { parent, children } = await linksOf(db, endpointId, id, LINKS_SHOWN);
  return { ...(parent ? { parent } : {}), children };
}

/**
 * One todo with its attempts and its answered questions (docs/design/ask-human.md), oldest
 * first, its lineage, and its routing trace when an event made it.
 */
export async function getTodo(
  deps: TodoDeps,
  scope: ReadScope,
  input: unknown,
): Promise<{ todo: ReadTodo; attempts: TodoAttempt[]; answers: TodoAnswer[]; links: TodoLinks; route?: TodoRoute }> {
  const { id } = parseInput(getTodoInput, input);
  // The reads at once; the attempts and answers are shown only when the todo is in scope.
  const [todo, attempts, answers] = await Promise.all([
    getRow(deps.db, scope, id),
    listAttempts(deps.db, scope.endpointId, id),
    todoAnswers(deps.db, scope.endpointId, id),
  ]);
  if (!todo) throw notFound('todo', id);
  const [withStatus] = await withWaiting(deps.db, scope.endpointId, [todo]);
  const route = await routeOf(deps.db, todo);
  const links = await linksOfTodo(deps.db, scope.endpointId, id);
  return { todo: withStatus ?? todo, attempts, answers, links, ...(route ? { route } : {}) };
}

export async function listTodos(
  deps: TodoDeps,
  scope: ReadScope,
  input: unknown,
): Promise<{ todos: ReadTodo[]; next_cursor: string | null }> {
  const data = parseInput(listTodosInput, input ?? {});
  if (data.cursor !== undefined && !isId('td', data.cursor))
    throw invalidArgument('cursor', 'is not a cursor from a previous page');
  let queues = scope.queues ?? null;
  if (data.queue !== undefined) queues = queues && !queues.includes(data.queue) ? [] : [data.queue];
  const limit = data.limit ?? LIMITS.listDefault;
  // One row more than asked tells whether another page exists, so the last page never
  // hands out a cursor to an empty one.
  const rows = await listRows(deps.db, scope.endpointId, {
    queues,
    state: data.state ?? null,
    limit: limit + 1,
    before: data.cursor ?? null,
    includeSynthetic: data.include_synthetic ?? false,
  });
  const todos = await withWaiting(deps.db, scope.endpointId, rows.slice(0, limit));
  return { todos, next_cursor: rows.length > limit ? (todos.at(-1)?.id ?? null) : null };
}
