// /api/v1 routes for sign-in and people: setup, login, logout, whoami, tokens, humans.

import type { FastifyInstance } from 'fastify';
import { route } from '../http/contract.js';
import { idParams } from './contract-common.js';
import {
  humanCreatedOut,
  humanListOut,
  humanOneOut,
  loggedOutOut,
  signedInOut,
  tokenListOut,
  tokenMintedOut,
  tokenOneOut,
  whoamiOut,
} from '../contract/people.js';
import { createHuman, createInput, getHuman, listHumans } from '../identity/humans.js';
import { exchangeCliLoginCode, exchangeInput } from '../identity/cli-login.js';
import { login, loginInput, logout } from '../identity/login.js';
import type { TokenDeps } from '../identity/principal.js';
import { completeSetup, setupInput } from '../identity/setup.js';
import { listTokens, mintInput, mintToken, revokeToken } from '../identity/tokens.js';
import type { Auth } from '../http/auth.js';

export function identityRoutes(app: FastifyInstance, deps: TokenDeps, auth: Auth, now: () => Date): void {
  const signIn = { tag: 'sign-in', access: 'public' } as const;
  const tokens = { tag: 'tokens', access: 'human' } as const;
  const people = { tag: 'humans', access: 'admin' } as const;
  route(
    app,
    {
      ...signIn,
      method: 'POST',
      url: '/api/v1/setup',
      summary: 'First run: the setup link’s token makes the first admin.',
      body: setupInput,
      answers: { 201: humanOneOut },
    },
    async (request, reply) => {
      auth.limitSignIn(request, reply);
      return reply.status(201).send({ human: await completeSetup(deps, request.body) });
    },
  );
  route(
    app,
    {
      ...signIn,
      method: 'POST',
      url: '/api/v1/auth/login',
      summary: 'Sign in with a password: an API token (`sbt_…`).',
      body: loginInput,
      answers: { 201: signedInOut },
    },
    async (request, reply) => {
      const email = (request.body as { email?: unknown } | null)?.email;
      return reply.status(201).send(await auth.throttledSignIn(request, reply, email, () => login(deps, request.body)));
    },
  );
  // `switchboard login --web` spends its one-time code here (docs/design/cli-login.md): no
  // bearer (the code is the proof), and the sign-in throttle by address, as for a password.
  route(
    app,
    {
      ...signIn,
      method: 'POST',
      url: '/api/v1/auth/cli-token',
      summary: 'Exchange `switchboard login --web`’s one-time code for a token.',
      body: exchangeInput,
      answers: { 201: signedInOut },
    },
    async (request, reply) => {
      auth.limitSignIn(request, reply);
      return reply.status(201).send(await exchangeCliLoginCode(deps, request.body));
    },
  );
  route(
    app,
    {
      ...signIn,
      access: 'human',
      method: 'POST',
      url: '/api/v1/auth/logout',
      summary: 'Revoke the token this request carries.',
      answers: { 200: loggedOutOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return logout(deps, principal);
    },
  );
  route(
    app,
    {
      ...tokens,
      method: 'GET',
      url: '/api/v1/whoami',
      summary: 'Who this token is.',
      answers: { 200: whoamiOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return { human: principal.human, token: principal.token };
    },
  );
  route(
    app,
    {
      ...tokens,
      method: 'GET',
      url: '/api/v1/tokens',
      summary: 'Your API tokens.',
      answers: { 200: tokenListOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return { tokens: await listTokens(deps, principal) };
    },
  );
  route(
    app,
    {
      ...tokens,
      method: 'POST',
      url: '/api/v1/tokens',
      summary: 'Mint an API token (a workflow token only pushes todos and messages).',
      body: mintInput,
      answers: { 201: tokenMintedOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await mintToken(deps, principal, request.body, now()));
    },
  );
  route(
    app,
    {
      ...tokens,
      method: 'DELETE',
      url: '/api/v1/tokens/:id',
      summary: 'Revoke one of your tokens.',
      params: idParams,
      answers: { 200: tokenOneOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return { token: await revokeToken(deps, principal, request.params.id) };
    },
  );
  route(
    app,
    {
      ...people,
      method: 'GET',
      url: '/api/v1/humans',
      summary: 'Every human.',
      answers: { 200: humanListOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'admin');
      return { humans: await listHumans(deps) };
    },
  );
  route(
    app,
    {
      ...people,
      method: 'POST',
      url: '/api/v1/humans',
      summary: 'Add a human (with a password, or an invite link).',
      body: createInput,
      answers: { 201: humanCreatedOut },
    },
    async (request, reply) => {
      const actor = await auth.authenticate(request, reply, 'admin');
      return reply.status(201).send(await createHuman(deps, request.body, actor));
    },
  );
  route(
    app,
    {
      ...people,
      method: 'GET',
      url: '/api/v1/humans/:id',
      summary: 'One human.',
      params: idParams,
      answers: { 200: humanOneOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'admin');
      return { human: await getHuman(deps, request.params.id) };
    },
  );
}
