// Putting many todos on an endpoint's queues at once (docs/design/todos.md, "Bulk
// create"): every item is checked first with the single create's schema, and one bad item
// refuses the whole request with every bad item listed; then one statement inserts the
// rest, each key deduplicated like a single create's and a key repeated in the request
// answering its first item's todo.

import { z } from 'zod';
import { AppError, isAppError } from '../domain/errors.js';
import { createTodoInput, parseInput, type CreateTodoInput, type Todo } from '../domain/todo.js';
import { insertTodos } from '../store/todo-bulk.js';
import { idempotencyWindow, type Sender, type TodoDeps } from './context.js';
import { insertArgs } from './create.js';
import { requireTodoRoom } from '../quotas/check.js';

/**
 * The most items one request takes: a thousand todos of a few KiB fit one request body
 * (http/app.ts, BULK_BODY_LIMIT) and one statement of well under a second; more would hold
 * a connection and the body in memory long enough to hurt the requests around it.
 */
export const BULK_MAX = 1000;

export const createTodosInput = z.strictObject({
  todos: z
    .array(z.unknown())
    .min(1, 'must list at least one todo')
    .max(BULK_MAX, `must list at most ${BULK_MAX} todos`),
});

export interface BulkTarget {
  endpointId: string;
  /** The queues an item may name, and how a refusal describes them. */
  queues: string[];
  queuesLabel: string;
}

/** One bad item: its index in `todos`, the field at fault and what is wrong with it. */
export interface ItemError {
  index: number;
  field: string;
  message: string;
}

export interface BulkResult {
  /** In request order; a duplicate's entry is the todo that holds its key. */
  todos: Todo[];
  created: number;
  duplicates: number;
}

function parseItem(item: unknown, index: number, target: BulkTarget): CreateTodoInput | ItemError {
  try {
    const data = parseInput(createTodoInput, item);
    if (target.queues.includes(data.queue)) return data;
    return { index, field: 'queue', message: `queue: "${data.queue}" is not one of ${target.queuesLabel}` };
  } catch (err) {
    if (!isAppError(err, 'invalid_argument')) throw err;
    const field = err.details?.field;
    return { index, field: typeof field === 'string' ? field : 'input', message: err.message };
  }
}

/** Every item parsed, or invalid_argument listing each bad item (details.items). */
function parseItems(items: unknown[], target: BulkTarget): CreateTodoInput[] {
  const parsed = items.map((item, index) => parseItem(item, index, target));
  const bad = parsed.filter((p): p is ItemError => 'index' in p);
  if (bad.length === 0) return parsed as CreateTodoInput[];
  const first = bad[0] as ItemError;
  throw new AppError(
    'invalid_argument',
    `todos: ${bad.length} of ${items.length} items are invalid and nothing was written; ` +
      `the first is todos[${first.index}]: ${first.message}`,
    { field: 'todos', items: bad },
  );
}

export async function createTodos(
  deps: TodoDeps,
  target: BulkTarget,
  sender: Sender,
  input: unknown,
): Promise<BulkResult> {
  const data = parseItems(parseInput(createTodosInput, input).todos, target);
  // A key repeated in the request: the later items answer the first one's todo.
  const firstWithKey = new Map<string, number>();
  const unique: number[] = [];
  data.forEach((item, index) => {
    const key = item.idempotency_key;
    if (key !== undefined && firstWithKey.has(key)) return;
    if (key !== undefined) firstWithKey.set(key, index);
    unique.push(index);
  });
  // Every todo of the request shares its trace context (docs/design/tracing.md).
  const traceparent = deps.tracing?.traceparent() ?? null;
  const rows = unique.map((index) =>
    insertArgs(target.endpointId, sender, data[index] as CreateTodoInput, traceparent),
  );
  // Every item counts, the ones that will turn out to be replays of live todos included.
  await requireTodoRoom(deps.db, deps, target.endpointId, rows.length);
  const written = await insertTodos(deps.db, target.endpointId, rows, idempotencyWindow(deps));
  const byIndex = new Map(unique.map((index, at) => [index, written[at]]));
  const todos = data.map((item, index) => {
    const row = byIndex.get(index) ?? byIndex.get(firstWithKey.get(item.idempotency_key ?? '') ?? -1);
    if (!row) throw new Error(`bulk create: no answer for item ${index}`);
    return row.todo;
  });
  const created = written.filter((row) => row.created).length;
  if (created > 0) deps.metrics?.todosCreated.inc(created);
  return { todos, created, duplicates: data.length - created };
}
