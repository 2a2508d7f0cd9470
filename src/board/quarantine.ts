// The board's quarantine (docs/design/routing.md, docs/board.md "Quarantine and rules").
// /quarantine lists the signed-in human's held items (or another state's); /quarantine/{id}
// shows one with its payload and the Release and Discard forms (CSRF forms answered 303
// back to the list with a notice; an item already resolved is a 409 saying so). A
// webhook's rules page is src/board/rules.ts. Everything goes through the same use cases
// as the API, with the human as owner, so another human's item answers 404.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { QUARANTINE_STATES } from '../domain/routing.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { discardQuarantine, listQuarantine, releaseQuarantine, showQuarantine } from '../routing/quarantine.js';
import { chromeOf, field, notFoundPage, sendHtml, signedIn, signedInForm, type Form } from './guard.js';
import type { BoardDeps } from './guard.js';
import { errorLine, html, page } from './html.js';
import { itemDetail, quarantineTable, resolvedNotice, stateLinks } from './quarantine-html.js';
import { rulesPages } from './rules.js';
import type { IntakeDeps } from './webhooks.js';

type Deps = BoardDeps & { intake: IntakeDeps };
type IdParams = { Params: { id: string } };

const ownerOf = (session: BoardSession) => ({ humanId: session.principal.human.id });

async function showItem(
  deps: Deps,
  session: BoardSession,
  reply: FastifyReply,
  id: string,
  status = 200,
  discard: { reason: string; error?: string } = { reason: '' },
) {
  try {
    const { item } = await showQuarantine(deps.intake, ownerOf(session), id);
    const body = itemDetail(item, session.csrf, discard);
    return await sendHtml(reply, status, page(`Quarantined ${item.id}`, body, chromeOf(session, 'endpoints')));
  } catch (err) {
    if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
    throw err;
  }
}

/** An item already released or discarded (or whose event is gone): a 409 that says so. */
function conflictPage(reply: FastifyReply, session: BoardSession, id: string, message: string) {
  const body = html`${errorLine(`Not done: ${message}. Someone (or an agent) resolved it first; nothing more was made.`)}
<p><a href="/quarantine/${id}">See the item</a> · <a href="/quarantine">Back to the quarantine</a></p>`;
  return sendHtml(reply, 409, page('Already resolved', body, chromeOf(session, 'endpoints')));
}

function quarantinePages(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { state?: string; done?: string; item?: string } }>('/quarantine', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const q = request.query;
    const state = (QUARANTINE_STATES as readonly string[]).includes(q.state ?? '') ? (q.state as string) : 'held';
    const { items } = await listQuarantine(deps.intake, ownerOf(session), { state });
    let notice = html``;
    if ((q.done === 'released' || q.done === 'discarded') && q.item) {
      const done = q.done;
      const shown = await showQuarantine(deps.intake, ownerOf(session), q.item).catch((err: unknown) => {
        if (isAppError(err, 'not_found')) return null;
        throw err;
      });
      notice = resolvedNotice(done, shown?.item ?? null);
    }
    const body = html`${notice}<p class="note">Events a webhook's rules would have routed, from actors it does not trust: nothing reaches an agent until you release one. Trusted actors are set per webhook (<code>switchboard webhook trust</code>); rules are on each webhook's Rules page.</p>
${stateLinks(state)}${quarantineTable(items, state)}`;
    return sendHtml(reply, 200, page('Quarantine', body, chromeOf(session, 'endpoints')));
  });

  app.get<IdParams>('/quarantine/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    return showItem(deps, session, reply, request.params.id);
  });

  app.post<IdParams & { Body: Form }>('/quarantine/:id/release', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { id } = request.params;
    try {
      await releaseQuarantine(deps.intake, ownerOf(session), id, ownerOf(session));
      return await reply.redirect(`/quarantine?done=released&item=${encodeURIComponent(id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
      if (isAppError(err, 'conflict') || isAppError(err, 'failed_precondition'))
        return conflictPage(reply, session, id, err.message);
      throw err;
    }
  });

  app.post<IdParams & { Body: Form }>('/quarantine/:id/discard', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { id } = request.params;
    const reason = field(request.body, 'reason');
    try {
      await discardQuarantine(deps.intake, ownerOf(session), id, ownerOf(session), { reason });
      return await reply.redirect(`/quarantine?done=discarded&item=${encodeURIComponent(id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
      if (isAppError(err, 'conflict')) return conflictPage(reply, session, id, err.message);
      if (isAppError(err, 'invalid_argument'))
        return showItem(deps, session, reply, id, 400, { reason, error: err.message });
      throw err;
    }
  });
}

export function routingPages(app: FastifyInstance, deps: Deps): void {
  quarantinePages(app, deps);
  rulesPages(app, deps);
}
