// /api/v1 routes for endpoints, their todos and their token webhooks, plus the public
// ingest route POST /webhooks/{token}.

import type { FastifyInstance } from 'fastify';
import { deleteEndpoint, listEndpoints, revokeEndpoint, showEndpoint, vendEndpoint } from '../endpoints/manage.js';
import { cancelTodo, listEndpointTodos, pushTodo, retryTodo, showTodo, type OperatorDeps } from '../endpoints/todos.js';
import { ingestDelivery, type IngestDeps } from '../webhooks/ingest.js';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhook } from '../webhooks/manage.js';
import type { Auth } from './auth.js';

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { id: string } };

/** Query strings arrive as text; numeric fields are turned into numbers for validation. */
function listQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function endpointRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth, now: () => Date): void {
  // TODO(merge): composition root — once it passes `credentials` in these deps, drop the
  // fallback: the credential answers /mcp reuses (app.mcpCredentials), forgotten at once.
  const revoking = (): OperatorDeps =>
    deps.credentials || !app.hasDecorator('mcpCredentials') ? deps : { ...deps, credentials: app.mcpCredentials };
  app.post('/api/v1/endpoints', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await vendEndpoint(deps, human.id, request.body, now()));
  });
  app.get('/api/v1/endpoints', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return { endpoints: await listEndpoints(deps, human.id, now()) };
  });
  app.get<RefParams>('/api/v1/endpoints/:ref', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return showEndpoint(deps, human.id, request.params.ref, now());
  });
  app.post<RefParams>('/api/v1/endpoints/:ref/revoke', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return revokeEndpoint(revoking(), human.id, request.params.ref, now());
  });
  app.delete<RefParams>('/api/v1/endpoints/:ref', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteEndpoint(deps, human.id, request.params.ref);
  });

  app.post<RefParams>('/api/v1/endpoints/:ref/todos', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'workflow');
    const result = await pushTodo(deps, human.id, request.params.ref, request.body, now());
    return reply.status(result.created ? 201 : 200).send(result);
  });
  app.get<RefParams>('/api/v1/endpoints/:ref/todos', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return listEndpointTodos(deps, human.id, request.params.ref, listQuery(request.query));
  });
  app.get<IdParams>('/api/v1/todos/:id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return showTodo(deps, human.id, request.params.id);
  });
  app.post<IdParams>('/api/v1/todos/:id/retry', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return retryTodo(deps, human.id, request.params.id);
  });
  app.post<IdParams>('/api/v1/todos/:id/cancel', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return cancelTodo(deps, human.id, request.params.id);
  });

  app.post<RefParams>('/api/v1/endpoints/:ref/webhooks', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await createWebhook(deps, human.id, request.params.ref, request.body));
  });
  app.get<RefParams>('/api/v1/endpoints/:ref/webhooks', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return { webhooks: await listWebhooks(deps, human.id, request.params.ref) };
  });
  app.post<IdParams>('/api/v1/webhooks/:id/rotate', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return rotateWebhook(deps, human.id, request.params.id);
  });
  app.delete<IdParams>('/api/v1/webhooks/:id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteWebhook(deps, human.id, request.params.id);
  });
}

export function ingestRoutes(app: FastifyInstance, deps: IngestDeps, auth: Auth): void {
  app.post<{ Params: { token: string } }>('/webhooks/:token', async (request, reply) => {
    auth.limitIp(request, reply);
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const result = await ingestDelivery(deps, request.params.token, {
      body: request.body,
      titleHeader: header('x-switchboard-title'),
      deliveryId: header('idempotency-key') ?? header('x-delivery-id'),
    });
    return reply.status(result.created ? 201 : 200).send(result);
  });
}
