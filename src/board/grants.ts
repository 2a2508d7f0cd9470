// The board's grants page (docs/design/handoff.md, "Grants"; docs/board.md "Grants"):
// /grants lists the grants from and to the signed-in human's endpoints with the request
// form; approve, deny and revoke are CSRF forms answered 303 back to the list with a
// notice. A grant that is not the human's answers 404, one already decided a 409 saying
// so. Everything goes through the same use cases as the API.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { listEndpoints } from '../endpoints/manage.js';
import { approveGrant, createGrant, denyGrant, listGrants, revokeGrant } from '../grants/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { chromeOf, field, notFoundPage, sendHtml, signedIn, signedInForm, type BoardDeps, type Form } from './guard.js';
import { doneNotice, grantsTable, requestForm, type RequestForm } from './grants-html.js';
import { errorLine, html, page } from './html.js';

type IdParams = { Params: { id: string } };

async function render(
  deps: BoardDeps,
  session: BoardSession,
  reply: FastifyReply,
  status: number,
  form: RequestForm,
  notice = html``,
) {
  const humanId = session.principal.human.id;
  const grantDeps = { db: deps.operator.db };
  const [{ grants }, endpoints] = await Promise.all([
    listGrants(grantDeps, humanId),
    listEndpoints(deps.operator, humanId, deps.now()),
  ]);
  const mine = endpoints.filter((e) => e.state === 'active');
  const mineSlugs = new Set(endpoints.map((e) => e.slug));
  const rows = grants.map((grant) => ({ grant, incoming: mineSlugs.has(grant.to) }));
  const body = html`${notice}<p class="note">A grant lets one endpoint's agent hand todos to named queues of another (create_todo with <code>endpoint</code>). Revoking stops new hand-offs at once; todos already handed stay.</p>
${grantsTable(rows, session.csrf)}${requestForm(mine, form, session.csrf)}`;
  return sendHtml(reply, status, page('Grants', body, chromeOf(session, 'endpoints')));
}

function conflictPage(reply: FastifyReply, session: BoardSession, message: string) {
  const body = html`${errorLine(`Not done: ${message}.`)}<p><a href="/grants">Back to the grants</a></p>`;
  return sendHtml(reply, 409, page('Already decided', body, chromeOf(session, 'endpoints')));
}

export function grantPages(app: FastifyInstance, deps: BoardDeps): void {
  const grantDeps = { db: deps.operator.db };
  app.get<{ Querystring: { done?: string; grant?: string } }>('/grants', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const notice = doneNotice(request.query.done, request.query.grant);
    return render(deps, session, reply, 200, { from: '', to: '', queues: '' }, notice);
  });

  app.post<{ Body: Form }>('/grants', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const form = {
      from: field(request.body, 'from'),
      to: field(request.body, 'to').trim(),
      queues: field(request.body, 'queues'),
    };
    const queues = form.queues.split(/[\s,]+/).filter(Boolean);
    try {
      const { grant } = await createGrant(grantDeps, session.principal.human.id, {
        from: form.from,
        to: form.to,
        queues,
      });
      const done = grant.state === 'requested' ? 'requested' : 'created';
      return await reply.redirect(`/grants?done=${done}&grant=${encodeURIComponent(grant.id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'invalid_argument') || isAppError(err, 'not_found') || isAppError(err, 'conflict'))
        return render(deps, session, reply, isAppError(err, 'conflict') ? 409 : 400, { ...form, error: err.message });
      throw err;
    }
  });

  const decisions = { approve: approveGrant, deny: denyGrant, revoke: revokeGrant } as const;
  for (const [action, decide] of Object.entries(decisions)) {
    app.post<IdParams & { Body: Form }>(`/grants/:id/${action}`, async (request, reply) => {
      const session = await signedInForm(deps.identity, request, reply);
      if (!session) return reply;
      const { id } = request.params;
      try {
        await decide(grantDeps, session.principal.human.id, id);
        return await reply.redirect(`/grants?done=${action}&grant=${encodeURIComponent(id)}`, 303);
      } catch (err) {
        if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'grant');
        if (isAppError(err, 'conflict') || isAppError(err, 'forbidden'))
          return conflictPage(reply, session, err.message);
        throw err;
      }
    });
  }
}
