// /api/v1 routes for an endpoint's notify hooks, as its owner manages them: list (health,
// no secrets), create (201, signing secret shown once), rotate (optional body
// `{immediate: true}`: the old secret stops signing at once), delete. Another human's
// endpoint or hook answers 404 exactly like an unknown one.

import type { FastifyInstance } from 'fastify';
import { AppError, invalidArgument } from '../domain/errors.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import type { HookGuard } from '../hooks/guard.js';
import type { Keyring } from '../secrets/keyring.js';
import {
  createHook,
  createHookInput,
  deleteHook,
  listHooks,
  rotateHook,
  rotateHookInput,
  type HookDeps,
} from '../hooks/manage.js';
import { hookDeletedOut, hookListOut, hookWithSecret } from '../contract/hooks.js';
import { route } from '../http/contract.js';
import { refIdParams, refParams } from './contract-common.js';
import type { Auth } from '../http/auth.js';

export function hookRoutes(
  app: FastifyInstance,
  deps: EndpointDeps & { guard: HookGuard; keyring?: Keyring },
  auth: Auth,
): void {
  const hooks: HookDeps = {
    db: deps.db,
    guard: deps.guard,
    ...(deps.quotas ? { quotas: deps.quotas } : {}),
    ...(deps.keyring ? { keyring: deps.keyring } : {}),
  };
  async function owner(humanId: string, ref: string, live: boolean) {
    const endpoint = await resolveEndpoint(deps, humanId, ref);
    if (live && endpoint.revoked_at) throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked`);
    return { id: endpoint.id, queues: endpoint.queues };
  }

  const tagged = { tag: 'notify-hooks', access: 'human' } as const;
  const base = '/api/v1/endpoints/:ref/notify-hooks';
  route(
    app,
    {
      ...tagged,
      method: 'GET',
      url: base,
      summary: 'List an endpoint’s notify hooks and their health.',
      params: refParams,
      answers: { 200: hookListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return listHooks(hooks, await owner(human.id, request.params.ref, false));
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'POST',
      url: base,
      summary: 'Add a notify hook; its signing secret is shown once.',
      params: refParams,
      body: createHookInput,
      answers: { 201: hookWithSecret },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const created = await createHook(hooks, await owner(human.id, request.params.ref, true), request.body);
      return reply.status(201).send(created);
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'POST',
      url: `${base}/:id/rotate`,
      summary: 'A new signing secret, shown once.',
      params: refIdParams,
      body: rotateHookInput.omit({ hook_id: true }),
      answers: { 200: hookWithSecret },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const body: unknown = request.body ?? {};
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw invalidArgument('body', 'must be a JSON object, e.g. {"immediate": true}');
      }
      const input = { ...body, hook_id: request.params.id };
      return rotateHook(hooks, await owner(human.id, request.params.ref, true), input);
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'DELETE',
      url: `${base}/:id`,
      summary: 'Delete a notify hook.',
      params: refIdParams,
      answers: { 200: hookDeletedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return deleteHook(hooks, await owner(human.id, request.params.ref, false), { hook_id: request.params.id });
    },
  );
}
