// The queues page (home): lanes per endpoint and queue, the push form, the todo drawer
// or detail page, and the push / retry / cancel forms. Every action is a plain form post
// answered with a 303 back to the page (htmx follows it and swaps the page in place);
// a mistake re-renders the page with the message and the values typed so far.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { budgetsOfHuman } from '../budgets/board.js';
import { endpointCards, queueLanes } from '../endpoints/board.js';
import { cancelTodo, pushTodo, retryTodo, showTodo } from '../endpoints/todos.js';
import { isAppError } from '../domain/errors.js';
import { todoRings } from '../doorbell/todo-rings.js';
import { todoTimeline } from '../todos/timeline.js';
import { eventOfRoute } from '../webhooks/events.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { withError } from './field-errors.js';
import {
  backTo,
  type BoardDeps,
  chromeOf,
  field,
  sendHtml,
  notFoundPage,
  signedIn,
  signedInForm,
  type Form,
} from './guard.js';
import { errorLine, html, page } from './html.js';
import { searchBox } from './find-html.js';
import { drawer, lanesFragment, pushForm, todoDetail, type PushValues } from './queue-html.js';

const STATUS: Record<string, number> = { invalid_argument: 400, not_found: 404, conflict: 409, forbidden: 403 };

async function home(
  deps: BoardDeps,
  session: BoardSession,
  reply: FastifyReply,
  status = 200,
  error?: string,
  values?: PushValues,
) {
  const now = deps.now();
  const [lanes, budgets] = await Promise.all([
    queueLanes(deps.operator, session.principal.human.id, now),
    budgetsOfHuman(deps.operator, session.principal.human.id),
  ]);
  const body = html`${searchBox()}${withError(pushForm(lanes, session.csrf, values), error)}
<div data-live="/board/events?view=queues">${lanesFragment(lanes, now, budgets)}</div>`;
  return sendHtml(reply, status, page('Queues', body, chromeOf(session, 'queues')));
}

/** The push form's fields → the API's todo input; a payload that is not JSON names the field. */
function todoInput(form: Form | undefined): { ref: string; input: Record<string, unknown> } | { error: string } {
  const [ref = '', queue = ''] = field(form, 'target').split('/', 2);
  const input: Record<string, unknown> = { queue, title: field(form, 'title'), source: 'board' };
  const body = field(form, 'body');
  if (body) input.body = body;
  const payload = field(form, 'payload').trim();
  if (payload) {
    try {
      input.payload = JSON.parse(payload);
    } catch {
      return { error: 'payload: must be JSON (or left empty)' };
    }
  }
  const max = field(form, 'max_attempts').trim();
  if (max) input.max_attempts = /^\d+$/.test(max) ? Number(max) : max;
  const priority = field(form, 'priority').trim();
  if (priority) input.priority = /^[+-]?\d+$/.test(priority) ? Number(priority) : priority;
  const notBefore = field(form, 'not_before').trim();
  if (notBefore) input.not_before = notBefore;
  return { ref, input };
}

export function queuePages(app: FastifyInstance, deps: BoardDeps): void {
  app.get('/', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    return session ? home(deps, session, reply) : reply;
  });

  app.post<{ Body: Form }>('/todos', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const parsed = todoInput(request.body);
    const values = Object.fromEntries(
      ['target', 'title', 'body', 'payload', 'max_attempts', 'priority', 'not_before'].map((k) => [
        k,
        field(request.body, k),
      ]),
    ) as PushValues;
    if ('error' in parsed) return home(deps, session, reply, 400, parsed.error, values);
    try {
      await pushTodo(deps.operator, session.principal.human.id, parsed.ref, parsed.input, deps.now());
    } catch (err) {
      if (!isAppError(err) || !STATUS[err.code]) throw err;
      return home(deps, session, reply, STATUS[err.code], err.message, values);
    }
    return reply.redirect('/', 303);
  });

  app.get<{ Params: { id: string } }>('/todos/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    let view;
    try {
      const shown = await showTodo(deps.operator, session.principal.human.id, request.params.id);
      const humanId = session.principal.human.id;
      const [rings, cards, event, timeline] = await Promise.all([
        todoRings(deps.operator.db, shown.todo.endpoint_id, shown.todo.id),
        endpointCards(deps.operator, humanId, deps.now()),
        shown.route ? eventOfRoute(deps.operator, humanId, shown.route.event_id) : null,
        todoTimeline(deps.operator.db, shown.todo.endpoint_id, shown.todo.id),
      ]);
      const liveSessions = new Set(cards.flatMap((c) => c.sessions.map((s) => s.id)));
      const endpointSlugs = new Set(cards.map((c) => c.endpoint.slug));
      view = { ...shown, rings, liveSessions, event, endpointSlugs, ...(timeline ? { timeline } : {}) };
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'todo');
      throw err;
    }
    if (request.headers['hx-target'] === 'drawer') return sendHtml(reply, 200, drawer(view, session.csrf, deps.now()));
    const body = html`<p><a href="/">Back to the queues</a></p>${todoDetail(view, session.csrf, `/todos/${view.todo.id}`, deps.now())}`;
    return sendHtml(reply, 200, page(view.todo.title, body, chromeOf(session, 'queues')));
  });

  for (const verb of ['retry', 'cancel'] as const) {
    app.post<{ Params: { id: string }; Body: Form }>(`/todos/:id/${verb}`, async (request, reply) => {
      const session = await signedInForm(deps.identity, request, reply);
      if (!session) return reply;
      const act = verb === 'retry' ? retryTodo : cancelTodo;
      try {
        await act(deps.operator, session.principal.human.id, request.params.id);
      } catch (err) {
        if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'todo');
        if (!isAppError(err, 'conflict')) throw err;
        const body = html`${errorLine(err.message)}<p><a href="/todos/${request.params.id}">Back to the todo</a></p>`;
        return sendHtml(reply, 409, page('Not done', body, chromeOf(session, 'queues')));
      }
      return reply.redirect(backTo(request.body, '/'), 303);
    });
  }
}
