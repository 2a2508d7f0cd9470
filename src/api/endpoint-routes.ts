// /api/v1 routes for endpoints (vend, list, show, edit, rotate, revoke, delete), plus the
// public ingest route POST /webhooks/{token}. Their todos are in todo-routes.ts, their
// webhooks in event-routes.ts.

import type { FastifyInstance } from 'fastify';
import {
  credentialOut,
  endpointListOut,
  endpointOneOut,
  endpointRevokedOut,
  endpointShowOut,
  rotatedOut,
} from '../contract/endpoints.js';
import { endpointSettingsInput, rotateInput, vendInput } from '../domain/endpoint.js';
import { route } from '../http/contract.js';
import { deletedAnswer, refParams } from './contract-common.js';
import {
  deleteEndpoint,
  listEndpoints,
  revokeEndpoint,
  rotateEndpointCredential,
  showEndpoint,
  updateEndpoint,
  vendEndpoint,
} from '../endpoints/manage.js';
import { BODY_LIMIT } from '../http/app.js';
import { AppError } from '../domain/errors.js';
import type { OperatorDeps } from '../endpoints/todos.js';
import { ingestDelivery, type IngestDeps } from '../webhooks/ingest.js';
import type { Auth } from '../http/auth.js';

export function endpointRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth, now: () => Date): void {
  const endpoints = { tag: 'endpoints', access: 'human' } as const;
  route(
    app,
    {
      ...endpoints,
      method: 'POST',
      url: '/api/v1/endpoints',
      summary: 'Vend an endpoint: its credential, shown once.',
      body: vendInput,
      answers: { 201: credentialOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await vendEndpoint(deps, human.id, request.body, now()));
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'GET',
      url: '/api/v1/endpoints',
      summary: 'List your endpoints.',
      answers: { 200: endpointListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return { endpoints: await listEndpoints(deps, human.id, now()) };
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'GET',
      url: '/api/v1/endpoints/:ref',
      summary: 'Show an endpoint, its live sessions and how to connect.',
      params: refParams,
      answers: { 200: endpointShowOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return showEndpoint(deps, human.id, request.params.ref, now());
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'PATCH',
      url: '/api/v1/endpoints/:ref',
      summary: 'Change an endpoint’s settings.',
      params: refParams,
      body: endpointSettingsInput,
      answers: { 200: endpointOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return updateEndpoint(deps, human.id, request.params.ref, request.body, now());
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'POST',
      url: '/api/v1/endpoints/:ref/rotate',
      summary: 'A new credential; the old one works for a grace period.',
      params: refParams,
      body: rotateInput,
      answers: { 200: rotatedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return rotateEndpointCredential(deps, human.id, request.params.ref, request.body, now());
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'POST',
      url: '/api/v1/endpoints/:ref/revoke',
      summary: 'Revoke an endpoint: its credential stops, its live todos fail.',
      params: refParams,
      answers: { 200: endpointRevokedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return revokeEndpoint(deps, human.id, request.params.ref, now());
    },
  );
  route(
    app,
    {
      ...endpoints,
      method: 'DELETE',
      url: '/api/v1/endpoints/:ref',
      summary: 'Delete an endpoint and everything on it.',
      params: refParams,
      answers: { 200: deletedAnswer },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return deleteEndpoint(deps, human.id, request.params.ref);
    },
  );
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
