// /api/v1 routes for endpoints, their todos and their webhooks, plus the public ingest
// route POST /webhooks/{token}.

import type { FastifyInstance } from 'fastify';
import {
  deleteEndpoint,
  listEndpoints,
  revokeEndpoint,
  rotateEndpointCredential,
  showEndpoint,
  updateEndpoint,
  vendEndpoint,
} from '../endpoints/manage.js';
import { isBulkBody, pushTodos } from '../endpoints/todos-bulk.js';
import { BODY_LIMIT, BULK_BODY_LIMIT } from '../http/app.js';
import { AppError } from '../domain/errors.js';
import { cancelTodo, listEndpointTodos, pushTodo, retryTodo, showTodo, type OperatorDeps } from '../endpoints/todos.js';
import { ingestDelivery, type IngestDeps } from '../webhooks/ingest.js';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhook } from '../webhooks/manage.js';
import type { Auth } from '../http/auth.js';

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { id: string } };

/** Query strings arrive as text; numeric fields are turned into numbers for validation. */
function listQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function endpointRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth, now: () => Date): void {
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
  app.patch<RefParams>('/api/v1/endpoints/:ref', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return updateEndpoint(deps, human.id, request.params.ref, request.body, now());
  });
  app.post<RefParams>('/api/v1/endpoints/:ref/rotate', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return rotateEndpointCredential(deps, human.id, request.params.ref, request.body, now());
  });
  app.post<RefParams>('/api/v1/endpoints/:ref/revoke', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return revokeEndpoint(deps, human.id, request.params.ref, now());
  });
  app.delete<RefParams>('/api/v1/endpoints/:ref', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteEndpoint(deps, human.id, request.params.ref);
  });

  // One todo, or `{todos: [...]}` (a bulk create, counted once by the rate limit).
  app.post<RefParams>('/api/v1/endpoints/:ref/todos', { bodyLimit: BULK_BODY_LIMIT }, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'workflow');
    if (isBulkBody(request.body)) {
      return reply.status(201).send(await pushTodos(deps, human.id, request.params.ref, request.body, now()));
    }
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
    return rotateWebhook(deps, { humanId: human.id }, request.params.id);
  });
  app.delete<IdParams>('/api/v1/webhooks/:id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteWebhook(deps, { humanId: human.id }, request.params.id);
  });
}

/** The header wins over the query parameter; either is named in an error as the sender wrote it. */
function webhookPriority(header: string | undefined, query: unknown): { text: string; field: string } | undefined {
  if (header !== undefined) return { text: header, field: 'Switchboard-Priority' };
  if (query === undefined) return undefined;
  return { text: typeof query === 'string' ? query : '', field: 'priority' };
}

/**
 * The ingest route takes its body as raw bytes, whatever the content type: a signature is
 * over the bytes as sent, and the provider decides how they are read (webhooks/providers.ts).
 * Its own scope, so the rest of the API keeps Fastify's JSON parser; the body cap stays.
 */
export function ingestRoutes(app: FastifyInstance, deps: IngestDeps, auth: Auth): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });
    scope.post<{ Params: { token: string }; Querystring: { priority?: unknown } }>(
      '/webhooks/:token',
      async (request, reply) => {
        auth.limitIp(request, reply);
        const priority = request.headers['switchboard-priority'];
        try {
          const answer = await ingestDelivery(deps, request.params.token, {
            raw: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            contentType: request.headers['content-type'],
            headers: request.headers,
            priority: webhookPriority(Array.isArray(priority) ? priority[0] : priority, request.query.priority),
          });
          if ('challenge' in answer) return reply.status(200).send({ challenge: answer.challenge });
          return reply.status(answer.created ? 201 : 200).send(answer);
        } catch (err) {
          const wait = err instanceof AppError ? err.details?.retry_after_seconds : undefined;
          if (err instanceof AppError && err.code === 'resource_exhausted' && typeof wait === 'number') {
            void reply.header('Retry-After', String(wait));
          }
          throw err;
        }
      },
    );
  });
}
