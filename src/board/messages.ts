// The session page's message queue panel (docs/design/message-queue.md): entries with
// position #1..#N and a provenance label, Remove on every row, Edit only on the rows this
// human queued (the use case refuses the rest), Clear all, the add box and "N of M" with a
// full state. Every action is a plain form post through the message use cases, answered
// with a 303 back to the session page; with JavaScript, board.js subscribes to the session
// over /ws (the board cookie signs it in) and re-reads the panel fragment on every change.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { BoardSession } from '../identity/board-sessions.js';
import type { Actor, MessageDeps } from '../messages/context.js';
import {
  addMessage,
  clearMessages,
  editMessage,
  queueStatus,
  removeMessage,
  type EntryView,
  type QueueStatus,
} from '../messages/queue.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { placeError } from './field-errors.js';
import { csrfField, errorLine, html, isoTime, page, type SafeHtml } from './html.js';
import type { BoardDeps } from './guard.js';

const PROVENANCE: Record<string, string> = {
  user: 'you (board)',
  agent: 'agent',
  workflow: 'workflow',
  server: 'server',
};

export const actorOf = (session: BoardSession): Actor => ({ kind: 'user', humanId: session.principal.human.id });

function provenance(e: EntryView, humanId: string): string {
  if (e.queued_by === 'user') return e.sender_id === humanId ? PROVENANCE.user! : 'user';
  return PROVENANCE[e.queued_by] ?? e.queued_by;
}

function entryRow(e: EntryView, base: string, session: BoardSession): SafeHtml {
  const humanId = session.principal.human.id;
  const mine = e.queued_by === 'user' && e.sender_id === humanId;
  const remove = html`<form method="post" action="${base}/${e.id}/remove" class="inline">${csrfField(session.csrf)}<button type="submit" class="danger">Remove <span class="sr">#${e.position}</span></button></form>`;
  const edit = mine
    ? html`<form method="post" action="${base}/${e.id}/edit" class="inline edit">${csrfField(session.csrf)}<label class="sr" for="edit-${e.id}">Edit #${e.position}</label><input id="edit-${e.id}" name="content" required value="${e.content}"><button type="submit">Edit <span class="sr">#${e.position}</span></button></form>`
    : '';
  return html`<li data-entry="${e.id}" data-queued-by="${e.queued_by}"><span class="position">#${e.position}</span>
<span class="chip" data-provenance="${e.queued_by}">${provenance(e, humanId)}</span> <span class="content">${e.content}</span>
<span class="note">${isoTime(e.queued_at)}</span><div class="actions">${edit}${remove}</div></li>`;
}

/** The panel; `#message-queue` is what board.js replaces when /ws says it changed. */
export function messagePanel(status: QueueStatus, session: BoardSession, typed = ''): SafeHtml {
  const base = `/sessions/${status.session_id}/messages`;
  const full = status.max > 0 && status.count >= status.max;
  const capacity = status.max === 0 ? `${status.count} queued (no limit)` : `${status.count} of ${status.max}`;
  const list = status.entries.length
    ? html`<ol class="messages">${status.entries.map((e) => entryRow(e, base, session))}</ol>`
    : html`<p class="note">No queued messages.</p>`;
  const clear = status.entries.length
    ? html`<form method="post" action="${base}/clear" class="inline">${csrfField(session.csrf)}<button type="submit" class="danger">Clear all</button></form>`
    : '';
  return html`<section id="message-queue" class="slot" data-slot="message-queue" data-session-id="${status.session_id}" data-fragment="${base}" aria-labelledby="mq-title">
<h2 id="mq-title">Message queue <span class="count" data-capacity${full ? html` data-full="true"` : ''}>${capacity}${full ? ' · full' : ''}</span></h2>
${list}${clear}
<form method="post" action="${base}">${csrfField(session.csrf)}<label for="mq-add">Queue a message</label>
<textarea id="mq-add" name="content" rows="2" required>${typed}</textarea>
<div class="actions"><button type="submit" class="primary"${full ? ' disabled' : ''}>Add</button></div></form></section>`;
}

type Params = { Params: { id: string } };
type EntryParams = { Params: { id: string; entry: string } };

const STATUS: Record<string, number> = { invalid_argument: 400, queue_full: 409, entry_not_found: 404 };

export function messagePages(app: FastifyInstance, deps: BoardDeps & { messages: MessageDeps }): void {
  const { messages } = deps;

  app.get<Params>('/sessions/:id/messages', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    try {
      return sendHtml(
        reply,
        200,
        messagePanel(await queueStatus(messages, actorOf(session), request.params.id), session),
      );
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'session');
      throw err;
    }
  });

  /** Runs a form's action; a refusal shows the session's panel again with the message. */
  async function act(
    request: { params: { id: string }; body: Form },
    reply: FastifyReply,
    session: BoardSession,
    run: (actor: Actor) => Promise<unknown>,
  ) {
    const id = request.params.id;
    try {
      await run(actorOf(session));
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'session');
      if (!isAppError(err) || !STATUS[err.code]) throw err;
      const status = await queueStatus(messages, actorOf(session), id);
      const panel = placeError(messagePanel(status, session, field(request.body, 'content')), err.message, 'mq-add');
      const body = html`${panel.placed ? '' : errorLine(err.message)}<p><a href="/sessions/${id}">Back to the session</a></p>${panel.form}`;
      return sendHtml(reply, STATUS[err.code]!, page('Message not queued', body, chromeOf(session, 'endpoints')));
    }
    return reply.redirect(`/sessions/${encodeURIComponent(id)}`, 303);
  }

  app.post<Params & { Body: Form }>('/sessions/:id/messages', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const content = field(request.body, 'content');
    return act(request, reply, session, (actor) => addMessage(messages, actor, request.params.id, { content }));
  });

  app.post<Params & { Body: Form }>('/sessions/:id/messages/clear', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    return act(request, reply, session, (actor) => clearMessages(messages, actor, request.params.id));
  });

  app.post<EntryParams & { Body: Form }>('/sessions/:id/messages/:entry/remove', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const input = { entry_id: request.params.entry };
    return act(request, reply, session, (actor) => removeMessage(messages, actor, request.params.id, input));
  });

  app.post<EntryParams & { Body: Form }>('/sessions/:id/messages/:entry/edit', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const input = { entry_id: request.params.entry, content: field(request.body, 'content') };
    return act(request, reply, session, (actor) => editMessage(messages, actor, request.params.id, input));
  });
}
