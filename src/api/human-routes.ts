// /api/v1 routes of the human lifecycle (docs/design/people.md): an admin disables,
// enables, re-roles, deletes and resets humans, unlinks them from their OIDC provider
// account, lists and revokes their tokens and reads what was done to them (the audit); a
// human changes their own password. The use cases audit; these routes only authorise.

import type { FastifyInstance } from 'fastify';
import {
  changeOwnPassword,
  deleteHuman,
  issueReset,
  listHumanAuditPage,
  listHumanTokens,
  revokeHumanToken,
  unlinkHumanOidc,
  updateHuman,
} from '../identity/lifecycle.js';
import type { IdentityDeps } from '../identity/principal.js';
import type { Auth } from '../http/auth.js';

type IdParams = { Params: { id: string } };
type TokenParams = { Params: { id: string; tokenId: string } };

export function humanRoutes(app: FastifyInstance, deps: IdentityDeps, auth: Auth): void {
  app.patch<IdParams>('/api/v1/humans/:id', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return updateHuman(deps, actor, request.params.id, request.body);
  });

  app.delete<IdParams>('/api/v1/humans/:id', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return deleteHuman(deps, actor, request.params.id, request.body);
  });

  app.post<IdParams>('/api/v1/humans/:id/reset', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return reply.status(201).send(await issueReset(deps, actor, request.params.id, request.body));
  });

  app.get<IdParams>('/api/v1/humans/:id/tokens', async (request, reply) => {
    await auth.authenticate(request, reply, 'admin');
    return { tokens: await listHumanTokens(deps, request.params.id) };
  });

  app.get<IdParams>('/api/v1/humans/:id/audit', async (request, reply) => {
    await auth.authenticate(request, reply, 'admin');
    return listHumanAuditPage(deps, request.params.id, request.query);
  });

  app.delete<TokenParams>('/api/v1/humans/:id/tokens/:tokenId', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return { token: await revokeHumanToken(deps, actor, request.params.id, request.params.tokenId) };
  });

  app.delete<IdParams>('/api/v1/humans/:id/oidc', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return unlinkHumanOidc(deps, actor, request.params.id);
  });

  app.post('/api/v1/me/password', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    // A stolen token must not make the current password guessable at API speed.
    auth.limitSignIn(request, reply);
    return changeOwnPassword(deps, principal, request.body);
  });
}
