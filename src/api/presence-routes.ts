// /api/v1 routes for an endpoint's presence, as its owner steers it: read, set an override
// (`{presence: "in"|"out", until?: RFC 3339|null}`, no 8 h cap), clear it, and set or clear
// the shift. Another human's endpoint answers 404; a revoked one 409 on writes.

import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import { clearPresence, operatorInput, presenceOf, setPresence, setShift, shiftInput } from '../presence/manage.js';
import { route } from '../http/contract.js';
import { refParams } from './contract-common.js';
import { presenceOut } from '../contract/presence.js';
import type { Auth } from '../http/auth.js';

export function presenceRoutes(app: FastifyInstance, deps: EndpointDeps, auth: Auth): void {
  const presence = { db: deps.db };
  async function endpointId(humanId: string, ref: string, write: boolean): Promise<string> {
    const endpoint = await resolveEndpoint(deps, humanId, ref);
    if (endpoint.revoked_at) {
      if (write) throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked`);
      throw new AppError('not_found', `endpoint ${ref} has no presence: it is revoked`, { id: ref });
    }
    return endpoint.id;
  }

  const tagged = { tag: 'presence', access: 'human', params: refParams, answers: { 200: presenceOut } } as const;
  route(
    app,
    { ...tagged, method: 'GET', url: '/api/v1/endpoints/:ref/presence', summary: 'Read an endpoint’s presence.' },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return presenceOf(presence, await endpointId(human.id, request.params.ref, false));
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'PUT',
      url: '/api/v1/endpoints/:ref/presence',
      summary: 'Set a presence override.',
      body: operatorInput,
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const id = await endpointId(human.id, request.params.ref, true);
      return setPresence(presence, id, human.id, request.body);
    },
  );
  route(
    app,
    { ...tagged, method: 'DELETE', url: '/api/v1/endpoints/:ref/presence', summary: 'Clear the presence override.' },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return clearPresence(presence, await endpointId(human.id, request.params.ref, true));
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'PUT',
      url: '/api/v1/endpoints/:ref/shift',
      summary: 'Set or clear the shift.',
      body: shiftInput,
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return setShift(presence, await endpointId(human.id, request.params.ref, true), request.body);
    },
  );
}
