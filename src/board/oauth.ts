// OAuth on the board (docs/design/oauth.md, "Consent"): the consent page of /oauth/authorize
// behind the human's board session (signed out → the sign-in page, then back here), where
// the human picks which of their endpoints the client acts as — seeing its real queues and
// verbs — or vends a new one in place, and approves or denies; and each endpoint's
// authorized clients, with revoke. The consent form is a plain form (hx-boost off): its
// answer is a redirect to the client, which the page's CSP must allow as a form target.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { approve, checkAuthorize, deny, grantableEndpoints, type AuthorizeRequest } from '../oauth/authorize.js';
import type { OAuthDeps } from '../oauth/deps.js';
import { OAuthError } from '../oauth/errors.js';
import { listGrants, revokeClientOf, type GrantListing } from '../oauth/grants.js';
import type { EndpointDeps } from '../endpoints/manage.js';
import { chromeOf, field, sendHtml, notFoundPage, signedInForm, signedInOrBack, type Form } from './guard.js';
import { csrfField, errorLine, html, isoTime, joinHtml, page, type SafeHtml } from './html.js';
import { CONTENT_SECURITY_POLICY } from './headers.js';
import type { BoardDeps } from './guard.js';

/** The authorization request's parameters, echoed by the consent form. */
const ECHOED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
] as const;
/** The radio value of "a new endpoint". */
const NEW = '__new';

const queueList = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** The board's CSP, with the client's redirect origin allowed as the consent form's destination. */
function consentHeaders(reply: FastifyReply, redirectUri: string) {
  const origin = new URL(redirectUri).origin;
  void reply.header(
    'Content-Security-Policy',
    CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self' ${origin}`),
  );
}

function consentPage(
  session: BoardSession,
  request: AuthorizeRequest,
  params: Record<string, unknown>,
  endpoints: Awaited<ReturnType<typeof grantableEndpoints>>,
  chosen: { endpoint: string; newName: string; newQueues: string },
  error?: string,
): SafeHtml {
  const who = request.client.client_name ?? request.client.id;
  const echoed = joinHtml(
    ECHOED.map((name) => {
      const value = params[name];
      return typeof value === 'string' ? html`<input type="hidden" name="${name}" value="${value}">` : '';
    }),
  );
  const pick = chosen.endpoint || endpoints[0]?.slug || NEW;
  const options = joinHtml(
    endpoints.map(
      (
        e,
      ) => html`<label class="check"><input type="radio" name="endpoint" value="${e.slug}" id="ep-${e.slug}"${pick === e.slug ? ' checked' : ''}>
<span><strong>${e.name}</strong> <code>${e.slug}</code><span class="note"> — queues: ${joinHtml(e.queues.map(escape), ', ')}; verbs: ${joinHtml(e.verbs.map(escape), ', ')}</span></span></label>`,
    ),
  );
  const body = html`${errorLine(error)}<p><strong>${who}</strong> asks to act as one of your endpoints over MCP.
It gets exactly the queues and verbs of the endpoint you pick, nothing more, until you revoke it on the endpoint's page.
You will be sent back to <code>${new URL(request.redirectUri).origin}</code>.</p>
<form method="post" action="/oauth/authorize" hx-boost="false">${csrfField(session.csrf)}${echoed}
<fieldset><legend>Act as</legend>${options}
<label class="check"><input type="radio" name="endpoint" value="${NEW}" id="ep-new"${pick === NEW ? ' checked' : ''}> <span>A new endpoint</span></label>
<label for="new-name">New endpoint's name</label><input id="new-name" name="new_name" maxlength="80" value="${chosen.newName}">
<label for="new-queues">New endpoint's queues (separated by commas or spaces)</label><input id="new-queues" name="new_queues" value="${chosen.newQueues}">
</fieldset>
<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" class="primary" name="decision" value="approve">Approve</button></div></form>`;
  return page(`Authorize ${who}`, body, chromeOf(session));
}

/**
 * What the request came to when it cannot go on: a page for the human, never a redirect
 * to the client (docs/design/oauth.md, "Consent": every client registered itself).
 */
function refused(reply: FastifyReply, session: BoardSession, check: { message: string }) {
  return sendHtml(reply, 400, page('Authorization refused', errorLine(check.message), chromeOf(session)));
}

export function oauthPages(app: FastifyInstance, deps: BoardDeps, oauth: OAuthDeps): void {
  app.get('/oauth/authorize', async (request, reply) => {
    const session = await signedInOrBack(deps.identity, request, reply);
    if (!session) return reply;
    // Reached by an htmx swap (the boosted sign-in form): the page's CSP would stay the one
    // of the page swapped out, which forbids the form's way on to the client, so the browser
    // loads this URL as a page of its own.
    if (request.headers['hx-request'] === 'true') return reply.header('HX-Redirect', request.url).send('');
    const params = request.query as Record<string, unknown>;
    const check = await checkAuthorize(oauth, params);
    if (!check.ok) return refused(reply, session, check);
    const endpoints = await grantableEndpoints(oauth, session.principal.human.id, deps.now());
    consentHeaders(reply, check.request.redirectUri);
    const chosen = { endpoint: '', newName: '', newQueues: 'inbox' };
    return sendHtml(reply, 200, consentPage(session, check.request, params, endpoints, chosen));
  });

  app.post<{ Body: Form }>('/oauth/authorize', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const form = request.body ?? {};
    const check = await checkAuthorize(oauth, form);
    if (!check.ok) return refused(reply, session, check);
    if (field(form, 'decision') !== 'approve') return reply.redirect(deny(oauth, check.request), 303);
    const humanId = session.principal.human.id;
    const now = deps.now();
    const chosen = {
      endpoint: field(form, 'endpoint'),
      newName: field(form, 'new_name'),
      newQueues: field(form, 'new_queues') || 'inbox',
    };
    const choice =
      chosen.endpoint === NEW || chosen.endpoint === ''
        ? { vend: { name: chosen.newName.trim(), queues: queueList(chosen.newQueues) } }
        : { endpoint: chosen.endpoint };
    try {
      const approved = await approve(oauth, humanId, check.request, choice, now);
      return reply.redirect(approved.redirect, 303);
    } catch (err) {
      const shown =
        err instanceof OAuthError ||
        isAppError(err, 'invalid_argument') ||
        isAppError(err, 'not_found') ||
        isAppError(err, 'conflict') ||
        isAppError(err, 'failed_precondition') ||
        isAppError(err, 'resource_exhausted');
      if (!shown) throw err;
      const message =
        'vend' in choice ? (err as Error).message.replace(/^(name|queues)/, 'new endpoint $1') : (err as Error).message;
      const endpoints = await grantableEndpoints(oauth, humanId, now);
      consentHeaders(reply, check.request.redirectUri);
      return sendHtml(reply, 400, consentPage(session, check.request, form, endpoints, chosen, message));
    }
  });

  app.post<{ Params: { ref: string; grant: string }; Body: Form }>(
    '/endpoints/:ref/clients/:grant/revoke',
    async (request, reply) => {
      const session = await signedInForm(deps.identity, request, reply);
      if (!session) return reply;
      try {
        await revokeClientOf(oauth, session.principal.human.id, request.params.grant);
      } catch (err) {
        if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'authorized client');
        throw err;
      }
      return reply.redirect(`/endpoints/${encodeURIComponent(request.params.ref)}`, 303);
    },
  );
}

function clientRow(slug: string, g: GrantListing, csrf: string): SafeHtml {
  const name = g.client_name ?? g.client_id;
  return html`<tr><td>${name}</td><td>${isoTime(g.created_at)}</td><td>${g.last_used_at ? isoTime(g.last_used_at) : 'never'}</td><td>${g.live_sessions}</td>
<td><form method="post" action="/endpoints/${slug}/clients/${g.id}/revoke" class="inline">${csrfField(csrf)}
<button type="submit" aria-label="Revoke ${name}">Revoke</button></form></td></tr>`;
}

/** The endpoint page's list of OAuth clients acting as it, with revoke. */
export async function authorizedClients(deps: EndpointDeps, humanId: string, slug: string, csrf: string) {
  const grants = await listGrants(deps, humanId, slug);
  const table =
    grants.length === 0
      ? html`<p class="note">No OAuth client acts as this endpoint.</p>`
      : html`<table><thead><tr><th scope="col">Client</th><th scope="col">Authorized</th><th scope="col">Last token</th><th scope="col">Live sessions</th><th scope="col">Actions</th></tr></thead>
<tbody>${grants.map((g) => clientRow(slug, g, csrf))}</tbody></table>`;
  return html`<section aria-labelledby="oauth-clients-heading"><h2 id="oauth-clients-heading">Authorized clients</h2>
<p class="note">MCP clients you let act as this endpoint through OAuth. Revoking one ends its tokens and live sessions at once.</p>${table}</section>`;
}
