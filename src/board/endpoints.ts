// The endpoints page: a card per endpoint (live over SSE), one endpoint's own page, and
// the revoke and delete forms. Another human's endpoint answers 404 like an unknown one.

import type { FastifyInstance } from 'fastify';
import { endpointCardOf, endpointCards } from '../endpoints/board.js';
import { deleteEndpoint, revokeEndpoint } from '../endpoints/manage.js';
import { isAppError } from '../domain/errors.js';
import { chromeOf, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { errorLine, html, page } from './html.js';
import { withExtras } from './endpoint-extras.js';
import { endpointCard, endpointsFragment } from './endpoint-html.js';
import { authorizedClients } from './oauth.js';
import type { BoardDeps } from './guard.js';

type RefParams = { Params: { ref: string } };

export function endpointPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get('/endpoints', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const now = deps.now();
    const views = await withExtras(
      deps.operator.db,
      await endpointCards(deps.operator, session.principal.human.id, now),
    );
    const body = html`<p><a href="/endpoints/new" class="button">Vend an endpoint</a> · <a href="/grants">Hand-off grants</a></p>
<div data-live="/board/events?view=endpoints">${endpointsFragment(views, session.csrf, now)}</div>`;
    return sendHtml(reply, 200, page('Endpoints', body, chromeOf(session, 'endpoints')));
  });

  app.get<RefParams>('/endpoints/:ref', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    try {
      const shown = await endpointCardOf(deps.operator, session.principal.human.id, request.params.ref, deps.now());
      const [view] = await withExtras(deps.operator.db, [shown]);
      if (!view) return notFoundPage(reply, session, 'endpoint');
      const clients = await authorizedClients(
        deps.operator,
        session.principal.human.id,
        view.endpoint.slug,
        session.csrf,
      );
      const body = html`<p><a href="/endpoints">All endpoints</a></p>${endpointCard(view, session.csrf, deps.now(), true)}${clients}`;
      return sendHtml(reply, 200, page(view.endpoint.name, body, chromeOf(session, 'endpoints')));
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      throw err;
    }
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/revoke', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    try {
      await revokeEndpoint(deps.operator, session.principal.human.id, request.params.ref, deps.now());
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      throw err;
    }
    return reply.redirect('/endpoints', 303);
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/delete', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    try {
      await deleteEndpoint(deps.operator, session.principal.human.id, request.params.ref);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      if (!isAppError(err, 'conflict')) throw err;
      return sendHtml(reply, 409, page('Not deleted', errorLine(err.message), chromeOf(session, 'endpoints')));
    }
    return reply.redirect('/endpoints', 303);
  });
}
