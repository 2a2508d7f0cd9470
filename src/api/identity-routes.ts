// /api/v1 routes for sign-in and people: setup, login, logout, whoami, tokens, humans.

import type { FastifyInstance } from 'fastify';
import { createHuman, getHuman, listHumans } from '../identity/humans.js';
import { exchangeCliLoginCode } from '../identity/cli-login.js';
import { login, logout } from '../identity/login.js';
import type { TokenDeps } from '../identity/principal.js';
import { completeSetup } from '../identity/setup.js';
import { listTokens, mintToken, revokeToken } from '../identity/tokens.js';
import type { Auth } from '../http/auth.js';

type IdParams = { Params: { id: string } };

export function identityRoutes(app: FastifyInstance, deps: TokenDeps, auth: Auth, now: () => Date): void {
  app.post('/api/v1/setup', async (request, reply) => {
    auth.limitSignIn(request, reply);
    return reply.status(201).send({ human: await completeSetup(deps, request.body) });
  });

  app.post('/api/v1/auth/login', async (request, reply) => {
    const email = (request.body as { email?: unknown } | null)?.email;
    return reply.status(201).send(await auth.throttledSignIn(request, reply, email, () => login(deps, request.body)));
  });

  // `switchboard login --web` spends its one-time code here (docs/design/cli-login.md): no
  // bearer (the code is the proof), and the sign-in throttle by address, as for a password.
  app.post('/api/v1/auth/cli-token', async (request, reply) => {
    auth.limitSignIn(request, reply);
    return reply.status(201).send(await exchangeCliLoginCode(deps, request.body));
  });

  app.post('/api/v1/auth/logout', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return logout(deps, principal);
  });

  app.get('/api/v1/whoami', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return { human: principal.human, token: principal.token };
  });

  app.get('/api/v1/tokens', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return { tokens: await listTokens(deps, principal) };
  });

  app.post('/api/v1/tokens', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await mintToken(deps, principal, request.body, now()));
  });

  app.delete<IdParams>('/api/v1/tokens/:id', async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return { token: await revokeToken(deps, principal, request.params.id) };
  });

  app.get('/api/v1/humans', async (request, reply) => {
    await auth.authenticate(request, reply, 'admin');
    return { humans: await listHumans(deps) };
  });

  app.post('/api/v1/humans', async (request, reply) => {
    const actor = await auth.authenticate(request, reply, 'admin');
    return reply.status(201).send(await createHuman(deps, request.body, actor));
  });

  app.get<IdParams>('/api/v1/humans/:id', async (request, reply) => {
    await auth.authenticate(request, reply, 'admin');
    return { human: await getHuman(deps, request.params.id) };
  });
}
