// Finding and acting in bulk on a human's todos across their endpoints (the board's
// todos list): one endpoint when the filter names it, else every endpoint of the human
// (another human's is not_found like an unknown one, and admins see their own, as in the
// API). A queue that an endpoint does not have matches nothing there rather than failing,
// so one filter reads the same over several endpoints.

import type { Todo } from '../domain/todo.js';
import { listEndpoints as listRows, type Endpoint } from '../store/endpoints.js';
import { bulkAction, parseBulkAction, type BulkResult } from '../todos/bulk-actions.js';
import { findTodos, parseFind, type FindTodosInput } from '../todos/find.js';
import { resolveEndpoint } from './manage.js';
import type { OperatorDeps } from './todos.js';

export type FoundTodo = Todo & { endpoint: Pick<Endpoint, 'slug' | 'name'> };

/** The endpoints a filter covers: the named one, or all of the human's with the queue. */
async function endpointsOf(deps: OperatorDeps, humanId: string, ref: string | undefined, queue?: string) {
  const all = ref ? [await resolveEndpoint(deps, humanId, ref)] : await listRows(deps.db, humanId);
  return all.filter((e) => queue === undefined || e.queues.includes(queue));
}

export async function findHumanTodos(
  deps: OperatorDeps,
  humanId: string,
  ref: string | undefined,
  input: unknown,
): Promise<{ todos: FoundTodo[]; next_cursor: string | null; filter: FindTodosInput }> {
  const data = parseFind(input);
  const endpoints = await endpointsOf(deps, humanId, ref, data.queue);
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const page = await findTodos(
    deps,
    endpoints.map((e) => e.id),
    data,
  );
  const todos = page.todos.map((t) => {
    const e = byId.get(t.endpoint_id);
    return { ...t, endpoint: { slug: e?.slug ?? '', name: e?.name ?? '' } };
  });
  return { todos, next_cursor: page.next_cursor, filter: data };
}

/**
 * A bulk action over every endpoint the filter covers, one endpoint after another (each
 * audited on its own endpoint); the sums of matched and changed.
 */
export async function bulkHumanTodos(
  deps: OperatorDeps,
  humanId: string,
  ref: string | undefined,
  input: unknown,
): Promise<BulkResult> {
  const { data } = parseBulkAction(input);
  const endpoints = await endpointsOf(deps, humanId, ref, data.filter.queue);
  const total = { action: data.action, dry_run: data.dry_run === true, matched: 0, changed: 0 };
  for (const endpoint of endpoints) {
    const done = await bulkAction(deps, endpoint.id, humanId, data);
    total.matched += done.matched;
    total.changed += done.changed;
  }
  return total;
}
