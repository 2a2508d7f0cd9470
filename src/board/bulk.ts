// The board's bulk actions on one queue: "Retry all failed" and "Cancel all pending" in
// each queue's header. The button is a GET (nothing changes) that answers a confirmation
// page with the count of a dry run; only its form, a POST with the CSRF token, acts
// (docs/api.md, "Bulk actions"). The todos list's "Retry all matches" / "Cancel all
// matches" (scope=filter) take the list's filter the same way, over every endpoint it
// covers. Works without JavaScript; htmx only swaps the pages in.

import type { FastifyInstance } from 'fastify';
import { bulkTodos } from '../endpoints/bulk-todos.js';
import { isAppError } from '../domain/errors.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { errorLine, html, page } from './html.js';
import { BULK, confirmation, filterConfirmation, type FilterTarget, type Target } from './bulk-html.js';
import { filterInput, listFilterOf, listHref } from './find-html.js';
import { bulkHumanTodos } from '../endpoints/find-todos.js';
import type { BoardDeps } from './guard.js';

function targetOf(form: Form | undefined): Target | null {
  const action = field(form, 'action');
  if (action !== 'retry' && action !== 'cancel') return null;
  return { action, endpoint: field(form, 'endpoint'), queue: field(form, 'queue') };
}

const inputOf = (t: Target, dryRun: boolean) => ({
  action: t.action,
  filter: { queue: t.queue, state: BULK[t.action].state },
  ...(dryRun ? { dry_run: true } : {}),
});

/** A bulk action over the todos list's filter (scope=filter), when the form names one. */
function filterTargetOf(form: Form | undefined): FilterTarget | null {
  const action = field(form, 'action');
  if (field(form, 'scope') !== 'filter' || (action !== 'retry' && action !== 'cancel')) return null;
  return { action, filter: listFilterOf(form) };
}

const filterRun = (deps: BoardDeps, humanId: string, t: FilterTarget, dryRun: boolean) =>
  bulkHumanTodos(deps.operator, humanId, t.filter.endpoint, {
    action: t.action,
    filter: filterInput(t.filter),
    ...(dryRun ? { dry_run: true } : {}),
  });

export function bulkPages(app: FastifyInstance, deps: BoardDeps): void {
  /** Runs the use case; a board page for the errors a person can cause. */
  async function attempt<T>(session: BoardSession, reply: Parameters<typeof sendHtml>[0], work: () => Promise<T>) {
    try {
      return { ok: true as const, value: await work() };
    } catch (err) {
      if (isAppError(err, 'not_found')) return { ok: false as const, sent: notFoundPage(reply, session, 'endpoint') };
      if (!isAppError(err, 'invalid_argument')) throw err;
      return {
        ok: false as const,
        sent: sendHtml(
          reply,
          400,
          page(
            'Not done',
            html`${errorLine(err.message)}<p><a href="/">Back to the queues</a></p>`,
            chromeOf(session, 'queues'),
          ),
        ),
      };
    }
  }

  app.get<{ Querystring: Form }>('/bulk', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const humanId = session.principal.human.id;
    const matches = filterTargetOf(request.query);
    if (matches) {
      const dry = await attempt(session, reply, () => filterRun(deps, humanId, matches, true));
      if (!dry.ok) return dry.sent;
      const body = filterConfirmation(matches, dry.value.matched, session.csrf);
      const title = matches.action === 'cancel' ? 'Cancel all matches' : 'Retry all matches';
      return sendHtml(reply, 200, page(title, body, chromeOf(session, 'queues')));
    }
    const target = targetOf(request.query);
    if (!target) return notFoundPage(reply, session, 'bulk action');
    const dry = await attempt(session, reply, () =>
      bulkTodos(deps.operator, humanId, target.endpoint, inputOf(target, true)),
    );
    if (!dry.ok) return dry.sent;
    const body = confirmation(target, dry.value.matched, session.csrf);
    return sendHtml(reply, 200, page(BULK[target.action].label, body, chromeOf(session, 'queues')));
  });

  app.post<{ Body: Form }>('/bulk', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const humanId = session.principal.human.id;
    const matches = filterTargetOf(request.body);
    if (matches) {
      const run = await attempt(session, reply, () => filterRun(deps, humanId, matches, false));
      if (!run.ok) return run.sent;
      const body = html`<p data-changed="${run.value.changed}">${run.value.changed} of ${run.value.matched} todo(s) ${BULK[matches.action].done}.</p><p><a href="${listHref(matches.filter)}">Back to the list</a></p>`;
      return sendHtml(reply, 200, page('Done', body, chromeOf(session, 'queues')));
    }
    const target = targetOf(request.body);
    if (!target) return notFoundPage(reply, session, 'bulk action');
    const run = await attempt(session, reply, () =>
      bulkTodos(deps.operator, humanId, target.endpoint, inputOf(target, false)),
    );
    if (!run.ok) return run.sent;
    const body = html`<p data-changed="${run.value.changed}">${run.value.changed} of ${run.value.matched} todo(s) ${BULK[target.action].done}.</p><p><a href="/">Back to the queues</a></p>`;
    return sendHtml(reply, 200, page('Done', body, chromeOf(session, 'queues')));
  });
}
