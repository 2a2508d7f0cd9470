// /api/v1 routes of the human lifecycle (docs/design/people.md): an admin disables,
// enables, re-roles, deletes and resets humans, unlinks them from their OIDC provider
// account, lists and revokes their tokens and reads what was done to them (the audit); a
// human changes their own password. The use cases audit; these routes only authorise.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { route } from '../http/contract.js';
import { idParams } from './contract-common.js';
import {
  humanAuditOut,
  humanDeletedOut,
  humanUpdatedOut,
  oidcUnlinkedOut,
  passwordChangedOut,
  resetIssuedOut,
  tokenListOut,
  tokenOneOut,
} from '../contract/people.js';
import {
  auditQuery,
  changeOwnPassword,
  deleteInput,
  deleteHuman,
  issueReset,
  passwordInput,
  resetInput,
  listHumanAuditPage,
  listHumanTokens,
  revokeHumanToken,
  unlinkHumanOidc,
  updateHuman,
  updateInput,
} from '../identity/lifecycle.js';
import type { IdentityDeps } from '../identity/principal.js';
import type { Auth } from '../http/auth.js';

const tokenParams = idParams.extend({ tokenId: z.string().min(1).max(100).describe('The token id.') });

export function humanRoutes(app: FastifyInstance, deps: IdentityDeps, auth: Auth): void {
  const people = { tag: 'humans', access: 'admin' } as const;
  route(
    app,
    {
      ...people,
      method: 'PATCH',
      url: '/api/v1/humans/:id',
      summary: 'Disable, enable or re-role a human.',
      params: idParams,
      body: updateInput,
      answers: { 200: humanUpdatedOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return updateHuman(deps, actor, request.params.id, request.body);
    },
  );
  route(
    app,
    {
      ...people,
      method: 'DELETE',
      url: '/api/v1/humans/:id',
      summary: 'Delete a human (their endpoints go, or move to another).',
      params: idParams,
      body: deleteInput,
      answers: { 200: humanDeletedOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return deleteHuman(deps, actor, request.params.id, request.body);
    },
  );
  route(
    app,
    {
      ...people,
      method: 'POST',
      url: '/api/v1/humans/:id/reset',
      summary: 'Issue a password reset link.',
      params: idParams,
      body: resetInput,
      answers: { 201: resetIssuedOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return reply.status(201).send(await issueReset(deps, actor, request.params.id, request.body));
    },
  );
  route(
    app,
    {
      ...people,
      method: 'GET',
      url: '/api/v1/humans/:id/tokens',
      summary: 'A human’s API tokens.',
      params: idParams,
      answers: { 200: tokenListOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'admin');
      return { tokens: await listHumanTokens(deps, request.params.id) };
    },
  );
  route(
    app,
    {
      ...people,
      method: 'GET',
      url: '/api/v1/humans/:id/audit',
      summary: 'What was done to a human, a page at a time.',
      params: idParams,
      query: auditQuery,
      answers: { 200: humanAuditOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'admin');
      return listHumanAuditPage(deps, request.params.id, request.query);
    },
  );
  route(
    app,
    {
      ...people,
      method: 'DELETE',
      url: '/api/v1/humans/:id/tokens/:tokenId',
      summary: 'Revoke a human’s token.',
      params: tokenParams,
      answers: { 200: tokenOneOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return { token: await revokeHumanToken(deps, actor, request.params.id, request.params.tokenId) };
    },
  );
  route(
    app,
    {
      ...people,
      method: 'DELETE',
      url: '/api/v1/humans/:id/oidc',
      summary: 'Unlink a human from their OIDC account.',
      params: idParams,
      answers: { 200: oidcUnlinkedOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return unlinkHumanOidc(deps, actor, request.params.id);
    },
  );
  route(
    app,
    {
      ...people,
      access: 'human',
      tag: 'sign-in',
      method: 'POST',
      url: '/api/v1/me/password',
      summary: 'Change your own password.',
      body: passwordInput,
      answers: { 200: passwordChangedOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      // A stolen token must not make the current password guessable at API speed.
      auth.limitSignIn(request, reply);
      return changeOwnPassword(deps, principal, request.body);
    },
  );
}
