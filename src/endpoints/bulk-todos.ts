// Bulk cancel / retry over one of a human's endpoints: ownership first (another human's
// endpoint is not_found like an unknown one), then the use case (src/todos/bulk-actions.ts).

import { invalidArgument } from '../domain/errors.js';
import { bulkAction, parseBulkAction, type BulkResult } from '../todos/bulk-actions.js';
import { resolveEndpoint } from './manage.js';
import type { OperatorDeps } from './todos.js';

export async function bulkTodos(deps: OperatorDeps, humanId: string, ref: string, input: unknown): Promise<BulkResult> {
  const { data } = parseBulkAction(input);
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const queue = data.filter.queue;
  if (queue !== undefined && !endpoint.queues.includes(queue)) {
    throw invalidArgument(
      'filter.queue',
      `"${queue}" is not one of ${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
    );
  }
  return bulkAction(deps, endpoint.id, humanId, input);
}
