// The board's half of `switchboard login --web` (docs/design/cli-login.md): /cli/login, behind
// the human's board session (signed out → the sign-in page, then back here, as the OAuth
// consent page does), asks "Sign in the Switchboard CLI on this computer?" naming the
// loopback port and the token name, with Approve and Deny. The answer is a redirect to the
// CLI's loopback listener, so the form is a plain one (hx-boost off) and the page's CSP lets
// that one origin be the form's destination.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { BoardSession } from '../identity/board-sessions.js';
import {
  approveCliLogin,
  checkCliLoginRequest,
  CLI_LOGIN_CODE_TTL_SECONDS,
  denyCliLogin,
  type CliLoginRequest,
} from '../identity/cli-login.js';
import type { TokenDeps } from '../identity/principal.js';
import { chromeOf, field, sendHtml, signedInForm, signedInOrBack, type BoardIdentity, type Form } from './guard.js';
import { csrfField, errorLine, html, page, type SafeHtml, joinHtml } from './html.js';
import { CONTENT_SECURITY_POLICY } from './headers.js';

/** The request's parameters, echoed by the form. */
const ECHOED = ['redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'token_name'] as const;

/** The board's CSP, with the CLI's loopback origin allowed as the form's destination. */
function loopbackFormHeaders(reply: FastifyReply, redirectUri: string) {
  const origin = new URL(redirectUri).origin;
  void reply.header(
    'Content-Security-Policy',
    CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self' ${origin}`),
  );
}

function askPage(session: BoardSession, request: CliLoginRequest): SafeHtml {
  const params: Record<(typeof ECHOED)[number], string> = {
    redirect_uri: request.redirectUri,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    token_name: request.tokenName,
  };
  const echoed = joinHtml(ECHOED.map((n) => html`<input type="hidden" name="${n}" value="${params[n]}">`));
  const who = session.principal.human.email;
  const body = html`<p>A <code>switchboard login</code> on this computer, listening on port <strong>${request.port}</strong>
of <code>${new URL(request.redirectUri).hostname}</code>, asks for a login token named <strong>${request.tokenName}</strong>.
It will act as you (<strong>${who}</strong>) in every command until you sign it out or revoke it.</p>
<p class="note">Approve only if you just ran <code>switchboard login</code> yourself. The approval is good for ${CLI_LOGIN_CODE_TTL_SECONDS} seconds, once.</p>
<form method="post" action="/cli/login" hx-boost="false">${csrfField(session.csrf)}${echoed}
<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" class="primary" name="decision" value="approve">Approve</button></div></form>`;
  return page('Sign in the Switchboard CLI on this computer?', body, chromeOf(session));
}

function refusedPage(reply: FastifyReply, session: BoardSession, message: string) {
  return sendHtml(reply, 400, page('CLI sign-in refused', errorLine(message), chromeOf(session)));
}

/** The request, or null after answering with a page that names the bad field. */
function checked(reply: FastifyReply, session: BoardSession, params: Record<string, unknown>) {
  try {
    return checkCliLoginRequest(params);
  } catch (err) {
    if (!isAppError(err, 'invalid_argument')) throw err;
    void refusedPage(reply, session, err.message);
    return null;
  }
}

export function cliLoginPages(app: FastifyInstance, deps: { identity: BoardIdentity & TokenDeps }): void {
  app.get('/cli/login', async (request, reply) => {
    const session = await signedInOrBack(deps.identity, request, reply);
    if (!session) return reply;
    // Reached by an htmx swap (the boosted sign-in form): this page's CSP must be the
    // browser's, so it loads the URL as a page of its own (as the OAuth consent page does).
    if (request.headers['hx-request'] === 'true') return reply.header('HX-Redirect', request.url).send('');
    if (deps.identity.syntheticAdmin)
      return refusedPage(
        reply,
        session,
        'sign-in is off on this server (SWITCHBOARD_AUTH=off): the CLI needs no token',
      );
    const cli = checked(reply, session, request.query as Record<string, unknown>);
    if (!cli) return reply;
    loopbackFormHeaders(reply, cli.redirectUri);
    return sendHtml(reply, 200, askPage(session, cli));
  });

  app.post<{ Body: Form }>('/cli/login', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    if (deps.identity.syntheticAdmin)
      return refusedPage(
        reply,
        session,
        'sign-in is off on this server (SWITCHBOARD_AUTH=off): the CLI needs no token',
      );
    const cli = checked(reply, session, request.body ?? {});
    if (!cli) return reply;
    loopbackFormHeaders(reply, cli.redirectUri);
    if (field(request.body, 'decision') !== 'approve') return reply.redirect(denyCliLogin(cli), 303);
    return reply.redirect(await approveCliLogin(deps.identity, session.principal.human.id, cli), 303);
  });
}
