// The one-time setup page (first admin, or an invitee setting a password). Plain HTML
// forms that work without JavaScript; the full board arrives with its own issue.

import type { FastifyInstance } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { IdentityDeps } from '../identity/principal.js';
import { completeSetup, setupLinkLive } from '../identity/setup.js';
import type { Auth } from '../http/auth.js';
import { errorLine, escape, page } from './html.js';

function form(token: string, error?: string): string {
  return page(
    'Set up Switchboard',
    `${errorLine(error)}
<p>This one-time link creates your account. For an invite, the email is already known and may be left empty.</p>
<form method="post" action="/setup/${escape(token)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username">
<label for="display_name">Name</label><input id="display_name" name="display_name" autocomplete="name">
<label for="password">Password (at least 8 characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
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
      return page(
        'Account ready',
        `<p>Signed up as <strong>${escape(human.email)}</strong> (${human.role}).</p>
<p>Sign in from a terminal with <code>switchboard login --url ${escape(deps.publicUrl)}</code>.</p>`,
      );
    } catch (err) {
      if (!isAppError(err) || err.code === 'internal') throw err;
      return reply.status(err.code === 'unauthenticated' ? 404 : 400).send(form(request.params.token, err.message));
    }
  });
}
