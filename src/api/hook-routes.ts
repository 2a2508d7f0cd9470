// /api/v1 routes for an endpoint's notify hooks, as its owner manages them: list (health,
// no secrets), create (201, signing secret shown once), rotate (optional body
// `{immediate: true}`: the old secret stops signing at once), delete. Another human's
// endpoint or hook answers 404 exactly like an unknown one.

import type { FastifyInstance } from 'fastify';
import { AppError, invalidArgument } from '../domain/errors.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import type { HookGuard } from '../hooks/guard.js';
import type { Keyring } from '../secrets/keyring.js';
import { createHook, deleteHook, listHooks, rotateHook, type HookDeps } from '../hooks/manage.js';
import type { Auth } from '../http/auth.js';

type RefParams = { Params: { ref: string } };
type HookParams = { Params: { ref: string; id: string } };

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

  app.get<RefParams>('/api/v1/endpoints/:ref/notify-hooks', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return listHooks(hooks, await owner(human.id, request.params.ref, false));
  });
  app.post<RefParams>('/api/v1/endpoints/:ref/notify-hooks', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    const created = await createHook(hooks, await owner(human.id, request.params.ref, true), request.body);
    return reply.status(201).send(created);
  });
  app.post<HookParams>('/api/v1/endpoints/:ref/notify-hooks/:id/rotate', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    const body: unknown = request.body ?? {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidArgument('body', 'must be a JSON object, e.g. {"immediate": true}');
    }
    const input = { ...body, hook_id: request.params.id };
    return rotateHook(hooks, await owner(human.id, request.params.ref, true), input);
  });
  app.delete<HookParams>('/api/v1/endpoints/:ref/notify-hooks/:id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteHook(hooks, await owner(human.id, request.params.ref, false), { hook_id: request.params.id });
  });
}
