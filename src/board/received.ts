// The "Received" view of an endpoint (docs/design/intake.md, "The event history" and
// "Replay"): its latest events, one event as stored, and Replay (a CSRF form answered
// with 303 to the new event, which names the original it replays). Another human's
// endpoint answers 404, and an event is looked up within this endpoint only, so an id
// from elsewhere answers 404 too.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { EVENT_LIST_MAX, listEventsOf, replayEvent, showEvent } from '../webhooks/events.js';
import { chromeOf, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { errorLine, html, page } from './html.js';
import { eventDetail, eventTable } from './received-html.js';
import type { BoardDeps } from './guard.js';
import type { IntakeDeps } from './webhooks.js';

type Deps = BoardDeps & { intake: IntakeDeps };
type RefParams = { Params: { ref: string }; Querystring: { limit?: string } };
type IdParams = { Params: { ref: string; id: string } };

/** Events a page lists unless asked for more: the API's default, a screenful of recent work. */
const DEFAULT_LIMIT = 50;

async function target(deps: Deps, session: BoardSession, ref: string) {
  try {
    return await resolveEndpoint(deps.operator, session.principal.human.id, ref);
  } catch (err) {
    if (isAppError(err, 'not_found')) return null;
    throw err;
  }
}

/** `?limit=` as a whole number in 1…EVENT_LIST_MAX; anything else is the default. */
function limitOf(text: string | undefined): number {
  const n = text && /^\d{1,4}$/.test(text) ? Number(text) : DEFAULT_LIMIT;
  return n >= 1 && n <= EVENT_LIST_MAX ? n : DEFAULT_LIMIT;
}

const nav = (e: { slug: string; name: string }) =>
  html`<p><a href="/endpoints/${e.slug}">${e.name}</a> · <a href="/endpoints/${e.slug}/webhooks">Webhooks</a> · <a href="/endpoints/${e.slug}/events">Received</a></p>`;

async function showPage(deps: Deps, session: BoardSession, reply: FastifyReply, ref: string, id: string) {
  const endpoint = await target(deps, session, ref);
  if (!endpoint) return notFoundPage(reply, session, 'endpoint');
  try {
    const { event } = await showEvent(deps.operator, { endpointId: endpoint.id }, id);
    const body = html`${nav(endpoint)}${eventDetail(event, `/endpoints/${endpoint.slug}/events`, session.csrf)}`;
    return sendHtml(reply, 200, page(`Event ${event.id}`, body, chromeOf(session, 'endpoints')));
  } catch (err) {
    if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'event');
    throw err;
  }
}

export function receivedPages(app: FastifyInstance, deps: Deps): void {
  app.get<RefParams>('/endpoints/:ref/events', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    const limit = limitOf(request.query.limit);
    const { events } = await listEventsOf(deps.operator, endpoint.id, { limit });
    const base = `/endpoints/${endpoint.slug}/events`;
    const body = html`${nav(endpoint)}<p class="note">Every delivery a webhook of this endpoint accepted, and every replay. A redelivery of the same delivery id adds no row.</p>
${eventTable(events, base, limit, EVENT_LIST_MAX)}`;
    return sendHtml(reply, 200, page(`Received by ${endpoint.name}`, body, chromeOf(session, 'endpoints')));
  });

  app.get<IdParams>('/endpoints/:ref/events/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    return showPage(deps, session, reply, request.params.ref, request.params.id);
  });

  app.post<IdParams & { Body: Form }>('/endpoints/:ref/events/:id/replay', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    try {
      const { event } = await replayEvent(deps.intake, { endpointId: endpoint.id }, request.params.id);
      return await reply.redirect(`/endpoints/${endpoint.slug}/events/${event.id}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'event');
      if (!isAppError(err) || err.code === 'internal') throw err;
      const back = html`<p><a href="/endpoints/${endpoint.slug}/events/${request.params.id}">Back to the event</a></p>`;
      return sendHtml(
        reply,
        409,
        page('Not replayed', html`${errorLine(err.message)}${back}`, chromeOf(session, 'endpoints')),
      );
    }
  });
}
