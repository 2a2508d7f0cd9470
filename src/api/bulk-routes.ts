// POST /api/v1/endpoints/{ref}/todos/bulk: cancel or retry an endpoint's todos by filter
// (docs/api.md, "Bulk actions"). One request, however many rows it changes, takes one
// token of the caller's rate limit.

import type { FastifyInstance } from 'fastify';
import { bulkActionOut } from '../contract/todos.js';
import { route } from '../http/contract.js';
import { bulkActionInput } from '../todos/bulk-actions.js';
import { refParams } from './contract-common.js';
import { bulkTodos } from '../endpoints/bulk-todos.js';
import type { OperatorDeps } from '../endpoints/todos.js';
import type { Auth } from '../http/auth.js';

export function bulkRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth): void {
  route(
    app,
    {
      tag: 'todos',
      access: 'human',
      method: 'POST',
      url: '/api/v1/endpoints/:ref/todos/bulk',
      summary: 'Cancel or retry an endpoint’s todos by filter (or count them: dry_run).',
      params: refParams,
      body: bulkActionInput,
      answers: { 200: bulkActionOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return bulkTodos(deps, human.id, request.params.ref, request.body);
    },
  );
}
