// The todos list (GET /todos): the signed-in human's todos filtered by the query string
// (so every list is a bookmarkable URL), newest first, a page at a time by cursor. A bad
// filter value re-renders the list empty with the message naming the field. The buttons
// "Retry all matches" / "Cancel all matches" lead to the bulk confirmation (src/board/bulk.ts).

import type { FastifyInstance } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { findHumanTodos } from '../endpoints/find-todos.js';
import { listEndpoints } from '../endpoints/manage.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, type Form } from './guard.js';
import { errorLine, html, page } from './html.js';
import { filterInput, listFilterOf, todosList, type ListView } from './find-html.js';
import type { BoardDeps } from './guard.js';

/** Rows per page: a screenful, and what one keyset read per endpoint returns. */
const PAGE_SIZE = 50;

export function findPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get<{ Querystring: Form }>('/todos', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const humanId = session.principal.human.id;
    const filter = listFilterOf(request.query);
    const cursor = field(request.query, 'cursor');
    const endpoints = (await listEndpoints(deps.operator, humanId, deps.now())).map((e) => ({
      slug: e.slug,
      name: e.name,
    }));
    const view: ListView = { filter, todos: [], nextCursor: null, endpoints };
    let status = 200;
    try {
      const input = { ...filterInput(filter), limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) };
      const found = await findHumanTodos(deps.operator, humanId, filter.endpoint, input);
      view.todos = found.todos;
      view.nextCursor = found.next_cursor;
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      if (!isAppError(err, 'invalid_argument')) throw err;
      status = 400;
      view.error = err.message;
    }
    const body = html`${errorLine(view.error)}${todosList(view)}`;
    return sendHtml(reply, status, page('Todos', body, chromeOf(session, 'todos')));
  });
}
