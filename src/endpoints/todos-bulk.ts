// A human pushing many todos to one endpoint at once (POST /api/v1/endpoints/{ref}/todos
// with `{todos: [...]}`): the endpoint must still take work, each item names one of its
// queues, and an item without `source` is marked `api` like a single push.

import type { Sender } from '../todos/context.js';
import { createTodos, type BulkResult } from '../todos/create-bulk.js';
import { workingEndpoint, type OperatorDeps } from './todos.js';

/** Whether a request body is the bulk shape rather than one todo. */
export function isBulkBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'todos' in body;
}

export async function pushTodos(
  deps: OperatorDeps,
  humanId: string,
  ref: string,
  input: unknown,
  now: Date,
): Promise<BulkResult> {
  const endpoint = await workingEndpoint(deps, humanId, ref, now);
  const items = (input as { todos?: unknown }).todos;
  const withSource = Array.isArray(items)
    ? {
        ...(input as object),
        todos: items.map((item: unknown) =>
          item && typeof item === 'object' && !Array.isArray(item) && !('source' in item)
            ? { ...item, source: 'api' }
            : item,
        ),
      }
    : input;
  const target = {
    endpointId: endpoint.id,
    queues: endpoint.queues,
    queuesLabel: `${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
  };
  const sender: Sender = { humanId };
  return createTodos(deps, target, sender, withSource);
}
