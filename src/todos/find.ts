// Finding todos for a person (the board's todos list, docs/design/todos.md, "Finding
// todos"): the filter the bulk actions take (src/todos/bulk-actions.ts), plus priority and
// a keyset cursor, over one or more endpoints the caller has already resolved as theirs.
// Pages are newest first across those endpoints: ids are ULIDs, so one cursor (the last
// id shown) continues every endpoint's scan, and a page reads at most `limit + 1` rows per
// endpoint. The title matches as the bulk filter's `q` does, so "Cancel all matches" acts
// on exactly what the list showed (less what changed state meanwhile).

import { z } from 'zod';
import { invalidArgument } from '../domain/errors.js';
import { isId } from '../domain/ids.js';
import { LIMITS, parseInput, type Todo } from '../domain/todo.js';
import { findTodos as findRows } from '../store/todo-find.js';
import { bulkFilterInput, titlePattern } from './bulk-actions.js';
import type { TodoDeps } from './context.js';

export const findTodosInput = bulkFilterInput.extend({
  cursor: z.string().max(64).optional().describe('`next_cursor` from the previous page.'),
  limit: z.number().int().min(1).max(LIMITS.listMax).optional().describe('Page size.'),
});
export type FindTodosInput = z.infer<typeof findTodosInput>;

export interface FoundPage {
  todos: Todo[];
  next_cursor: string | null;
}

/** Parses a find; a bad field fails before any read. */
export function parseFind(input: unknown): FindTodosInput {
  const data = parseInput(findTodosInput, input ?? {});
  if (data.cursor !== undefined && !isId('td', data.cursor))
    throw invalidArgument('cursor', 'is not a cursor from a previous page');
  return data;
}

/** One page of the endpoints' todos that match, newest first. */
export async function findTodos(deps: TodoDeps, endpointIds: string[], data: FindTodosInput): Promise<FoundPage> {
  const limit = data.limit ?? LIMITS.listDefault;
  const pages = await Promise.all(
    endpointIds.map((endpointId) =>
      findRows(deps.db, {
        endpointId,
        queue: data.queue ?? null,
        state: data.state ?? null,
        kind: data.kind ?? null,
        source: data.source ?? null,
        priority: data.priority ?? null,
        priorityMin: data.priority_min ?? null,
        createdBefore: data.created_before ? new Date(data.created_before) : null,
        createdAfter: data.created_after ? new Date(data.created_after) : null,
        titleLike: data.q ? titlePattern(data.q) : null,
        before: data.cursor ?? null,
        // One row more than shown tells whether another page exists.
        limit: limit + 1,
      }),
    ),
  );
  const merged = pages.flat().sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const todos = merged.slice(0, limit);
  return { todos, next_cursor: merged.length > limit ? (todos.at(-1)?.id ?? null) : null };
}
