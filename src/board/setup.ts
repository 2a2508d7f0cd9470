// The one-time setup page (first admin, or an invitee or a reset link setting a password). Plain HTML
// forms that work without JavaScript. Spending the link proves who the human is, so the
// page ends signed in: a board session is opened and the browser goes to the queues (a
// reset ends every earlier sign-in first, docs/design/people.md).

import type { FastifyInstance } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { IdentityDeps } from '../identity/principal.js';
import { openBoardSession } from '../identity/board-sessions.js';
import { completeSetup, setupLinkLive } from '../identity/setup.js';
import type { Auth } from '../http/auth.js';
import { fieldError, formError, invalidAttrs } from './field-errors.js';
import { escape, page } from './html.js';
import { setSessionCookie } from './session.js';

function form(token: string, error?: string): string {
  const input = (name: string, label: string, attrs: string) =>
    `<label for="${name}">${label}</label><input id="${name}" name="${name}" ${attrs}${invalidAttrs(name, name, error)}>${fieldError(name, name, error)}`;
  return page(
    'Set up Switchboard',
    `${formError(error, ['email', 'display_name', 'password'])}
<p>This one-time link creates your account or sets your password. For an invite or a password reset, the email is already known and may be left empty.</p>
<form method="post" action="/setup/${escape(token)}">
${input('email', 'Email', 'type="email" autocomplete="username"')}
${input('display_name', 'Name', 'autocomplete="name"')}
${input('password', 'Password (at least 8 characters)', 'type="password" autocomplete="new-password" required minlength="8"')}
<button type="submit">Create account</button></form>`,
  );
}

type TokenParams = { Params: { token: string } };

export function setupPages(app: FastifyInstance, deps: IdentityDeps, auth: Auth): void {
  app.get<TokenParams>('/setup/:token', async (request, reply) => {
    auth.limitSignIn(request, reply);
    const live = await setupLinkLive(deps, request.params.token);
    void reply.type('text/html; charset=utf-8');
    if (!live)
      return reply.status(404).send(page('Link not valid', '<p>This setup link is unknown, used or expired.</p>'));
    return form(request.params.token);
  });

  app.post<TokenParams & { Body: Record<string, string> }>('/setup/:token', async (request, reply) => {
    auth.limitSignIn(request, reply);
    void reply.type('text/html; charset=utf-8');
    const fields = request.body ?? {};
    try {
      const human = await completeSetup(deps, {
        token: request.params.token,
        password: fields.password ?? '',
        ...(fields.email ? { email: fields.email } : {}),
        ...(fields.display_name ? { display_name: fields.display_name } : {}),
      });
      const session = await openBoardSession(deps, human.id);
      setSessionCookie(deps, request, reply, session.cookie);
      return reply.redirect('/', 303);
    } catch (err) {
      if (!isAppError(err) || err.code === 'internal') throw err;
      return reply.status(err.code === 'unauthenticated' ? 404 : 400).send(form(request.params.token, err.message));
    }
  });
}
