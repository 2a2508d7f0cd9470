// Board sign-in and sign-out. The session cookie is
// HttpOnly, SameSite=Lax, and Secure when the request came over TLS; every form that
// changes state carries a CSRF token (the session's own, or before sign-in a
// double-submit cookie), checked in constant time.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Auth } from '../http/auth.js';
import { isAppError } from '../domain/errors.js';
import { BOARD_SESSION_TTL_SECONDS, boardSession, signIn, signOut } from '../identity/board-sessions.js';
import type { IdentityDeps } from '../identity/principal.js';
import { SESSION_COOKIE } from '../http/auth.js';
import { sameToken } from './guard.js';
import { errorLine, page } from './html.js';

const LOGIN_CSRF_COOKIE = 'sb_login_csrf';

type Form = { Body: Record<string, string | undefined> };

function cookieOptions(request: FastifyRequest, maxAgeSeconds: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: request.protocol === 'https',
    maxAge: maxAgeSeconds,
  };
}

function loginForm(reply: FastifyReply, request: FastifyRequest, error?: string) {
  const csrf = randomBytes(18).toString('base64url');
  void reply.setCookie(LOGIN_CSRF_COOKIE, csrf, cookieOptions(request, 3600));
  void reply.type('text/html; charset=utf-8');
  return page(
    'Sign in',
    `${errorLine(error)}<form method="post" action="/login">
<input type="hidden" name="csrf" value="${csrf}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

export function sessionPages(app: FastifyInstance, deps: IdentityDeps, auth: Auth): void {
  app.get('/login', async (request, reply) => loginForm(reply, request));

  app.post<Form>('/login', async (request, reply) => {
    auth.limitSignIn(request, reply);
    const fields = request.body ?? {};
    if (!sameToken(fields.csrf, request.cookies[LOGIN_CSRF_COOKIE])) {
      return reply.status(403).send(loginForm(reply, request, 'The form expired; please sign in again.'));
    }
    try {
      const session = await signIn(deps, fields.email ?? '', fields.password ?? '');
      void reply.setCookie(SESSION_COOKIE, session.cookie, cookieOptions(request, BOARD_SESSION_TTL_SECONDS));
      void reply.clearCookie(LOGIN_CSRF_COOKIE, { path: '/' });
      return reply.redirect('/', 303);
    } catch (err) {
      if (!isAppError(err, 'unauthenticated')) throw err;
      return reply.status(401).send(loginForm(reply, request, err.message));
    }
  });

  app.post<Form>('/logout', async (request, reply) => {
    const cookie = request.cookies[SESSION_COOKIE];
    const session = await boardSession(deps, cookie);
    if (session && !sameToken(request.body?.csrf, session.csrf)) {
      return reply
        .status(403)
        .type('text/html; charset=utf-8')
        .send(page('Not signed out', errorLine('The form expired; reload and try again.')));
    }
    await signOut(deps, cookie);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });
}
