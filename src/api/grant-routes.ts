// /api/v1 routes for hand-off grants (docs/design/handoff.md, "Grants"): create or request
// one, approve or deny it (the target's owner), revoke it (either owner), list both
// directions, show one with its history.

import type { FastifyInstance } from 'fastify';
import { grantListOut, grantOneOut, grantShowOut } from '../contract/grants.js';
import {
  approveGrant,
  createGrant,
  createGrantInput,
  denyGrant,
  listGrants,
  revokeGrant,
  showGrant,
  type GrantDeps,
} from '../grants/manage.js';
import type { Auth } from '../http/auth.js';
import { route } from '../http/contract.js';
import { idParams } from './contract-common.js';

export function grantRoutes(app: FastifyInstance, deps: GrantDeps, auth: Auth): void {
  const humanId = async (request: Parameters<Auth['authenticate']>[0], reply: Parameters<Auth['authenticate']>[1]) =>
    (await auth.authenticate(request, reply, 'human')).human.id;
  const grants = { tag: 'grants', access: 'human' } as const;
  route(
    app,
    {
      ...grants,
      method: 'POST',
      url: '/api/v1/grants',
      summary: 'Let one of your endpoints hand todos to another: active within one owner, requested across owners.',
      body: createGrantInput,
      answers: { 201: grantOneOut },
    },
    async (request, reply) => {
      const made = await createGrant(deps, await humanId(request, reply), request.body);
      return reply.status(201).send(made);
    },
  );
  route(
    app,
    {
      ...grants,
      method: 'GET',
      url: '/api/v1/grants',
      summary: 'Grants from and to your endpoints (both directions).',
      answers: { 200: grantListOut },
    },
    async (request, reply) => listGrants(deps, await humanId(request, reply)),
  );
  route(
    app,
    {
      ...grants,
      method: 'GET',
      url: '/api/v1/grants/:id',
      summary: 'One grant and its history.',
      params: idParams,
      answers: { 200: grantShowOut },
    },
    async (request, reply) => showGrant(deps, await humanId(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...grants,
      method: 'POST',
      url: '/api/v1/grants/:id/approve',
      summary: "Approve a requested grant to one of your endpoints (the target's owner only).",
      params: idParams,
      answers: { 200: grantOneOut },
    },
    async (request, reply) => approveGrant(deps, await humanId(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...grants,
      method: 'POST',
      url: '/api/v1/grants/:id/deny',
      summary: "Deny a requested grant to one of your endpoints (the target's owner only).",
      params: idParams,
      answers: { 200: grantOneOut },
    },
    async (request, reply) => denyGrant(deps, await humanId(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...grants,
      method: 'DELETE',
      url: '/api/v1/grants/:id',
      summary: 'Revoke a grant (either owner): no new hand-off under it from now on; todos already handed stay.',
      params: idParams,
      answers: { 200: grantOneOut },
    },
    async (request, reply) => revokeGrant(deps, await humanId(request, reply), request.params.id),
  );
}
