// The one-time setup page (first admin, or an invitee or a reset link setting a password). Plain HTML
// forms that work without JavaScript. Spending the link proves who the human is, so the
// page ends signed in: a board session is opened and the browser goes to the queues (a
// reset ends every earlier sign-in first, docs/design/people.md). Because the page signs a
// browser in, its form carries a CSRF token matched against a cookie, as /login's does: a
// cross-site form cannot sign a victim's browser into the attacker's account.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boardCookies, type Auth } from '../http/auth.js';
import { isAppError } from '../domain/errors.js';
import type { IdentityDeps } from '../identity/principal.js';
import { openBoardSession } from '../identity/board-sessions.js';
import { completeSetup, setupLinkLive } from '../identity/setup.js';
import { fieldError, formError, invalidAttrs } from './field-errors.js';
import { sameToken } from './guard.js';
import { csrfField, errorLine, html, htmlText, page, type SafeHtml } from './html.js';
import { setSessionCookie, signedOutCsrf } from './session.js';

function form(token: string, csrf: string, error?: string): SafeHtml {
  const input = (name: string, label: string, attrs: SafeHtml) =>
    html`<label for="${name}">${label}</label><input id="${name}" name="${name}" ${attrs}${invalidAttrs(name, name, error)}>${fieldError(name, name, error)}`;
  return page(
    'Set up Switchboard',
    html`${formError(error, ['email', 'display_name', 'password'])}
<p>This one-time link creates your account or sets your password. For an invite or a password reset, the email is already known and may be left empty.</p>
<form method="post" action="/setup/${token}">${csrfField(csrf)}
${input('email', 'Email', html`type="email" autocomplete="username"`)}
${input('display_name', 'Name', html`autocomplete="name"`)}
${input('password', 'Password (at least 8 characters)', html`type="password" autocomplete="new-password" required minlength="8"`)}
<button type="submit">Create account</button></form>`,
  );
}

type TokenParams = { Params: { token: string } };

/** The form again, with a fresh CSRF token (and cookie). */
function formAgain(deps: IdentityDeps, request: FastifyRequest<TokenParams>, reply: FastifyReply, error?: string) {
  return htmlText(form(request.params.token, signedOutCsrf(deps, request, reply), error));
}

export function setupPages(app: FastifyInstance, deps: IdentityDeps, auth: Auth): void {
  app.get<TokenParams>('/setup/:token', async (request, reply) => {
    auth.limitSignIn(request, reply);
    const live = await setupLinkLive(deps, request.params.token);
    void reply.type('text/html; charset=utf-8');
    if (!live)
      return reply
        .status(404)
        .send(htmlText(page('Link not valid', html`<p>This setup link is unknown, used or expired.</p>`)));
    return formAgain(deps, request, reply);
  });

  app.post<TokenParams & { Body: Record<string, string> }>('/setup/:token', async (request, reply) => {
    auth.limitSignIn(request, reply);
    void reply.type('text/html; charset=utf-8');
    const fields = request.body ?? {};
    const names = boardCookies(deps.publicUrl);
    if (!sameToken(fields.csrf, request.cookies[names.loginCsrf])) {
      return reply
        .status(403)
        .send(htmlText(page('Set up Switchboard', errorLine('The form expired; open the link again and retry.'))));
    }
    try {
      const human = await completeSetup(deps, {
        token: request.params.token,
        password: fields.password ?? '',
        ...(fields.email ? { email: fields.email } : {}),
        ...(fields.display_name ? { display_name: fields.display_name } : {}),
      });
      const session = await openBoardSession(deps, human.id);
      setSessionCookie(deps, request, reply, session.cookie);
      void reply.clearCookie(names.loginCsrf, { path: '/', secure: names.secure });
      return reply.redirect('/', 303);
    } catch (err) {
      if (!isAppError(err) || err.code === 'internal') throw err;
      return reply
        .status(err.code === 'unauthenticated' ? 404 : 400)
        .send(formAgain(deps, request, reply, err.message));
    }
  });
}
