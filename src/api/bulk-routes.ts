// POST /api/v1/endpoints/{ref}/todos/bulk: cancel or retry an endpoint's todos by filter
// (docs/api.md, "Bulk actions"). One request, however many rows it changes, takes one
// token of the caller's rate limit.

import type { FastifyInstance } from 'fastify';
import { bulkTodos } from '../endpoints/bulk-todos.js';
import type { OperatorDeps } from '../endpoints/todos.js';
import type { Auth } from '../http/auth.js';

export function bulkRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth): void {
  app.post<{ Params: { ref: string } }>('/api/v1/endpoints/:ref/todos/bulk', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return bulkTodos(deps, human.id, request.params.ref, request.body);
  });
}
