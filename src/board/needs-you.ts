// The board's "Needs you" view (docs/board.md, "Needs you"; docs/design/ask-human.md):
// /needs-you lists the signed-in human's todos waiting on an answer, oldest question
// first, each with its question and an answer form (a radio per choice, or a text box),
// and a Cancel. The answer is a CSRF form through the same use case as the API, answered
// 303 back to the list with a notice; a todo already answered, timed out or canceled is a
// 409 saying so, a bad answer a 400 naming the field. Another human's todo answers 404.

import type { FastifyInstance } from 'fastify';
import { answerHumanTodo } from '../endpoints/todos.js';
import { isAppError } from '../domain/errors.js';
import { needsYou, NEEDS_YOU_SHOWN, type WaitingTodo } from '../todos/index.js';
import { chromeOf, field, notFoundPage, sendHtml, signedIn, signedInForm, type BoardDeps, type Form } from './guard.js';
import { csrfField, errorLine, html, isoTime, joinHtml, page, type SafeHtml } from './html.js';

function answerForm(t: WaitingTodo, csrf: string): SafeHtml {
  const id = t.todo_id;
  const input = t.choices
    ? html`<fieldset><legend>Pick one</legend>${joinHtml(
        t.choices.map(
          (c, i) =>
            html`<label><input type="radio" name="choice" value="${i}"${i === 0 ? html` required` : ''}> ${c}</label>`,
        ),
      )}</fieldset>`
    : html`<label for="a-${id}">Your answer</label><textarea id="a-${id}" name="text" rows="3" required maxlength="4000"></textarea>`;
  return html`<form method="post" action="/needs-you/${id}/answer">${csrfField(csrf)}${input}<button type="submit" class="primary">Answer <span class="sr">${t.title}</span></button></form>
<form method="post" action="/todos/${id}/cancel" class="inline">${csrfField(csrf)}<input type="hidden" name="back" value="/needs-you"><button type="submit" class="danger">Cancel the todo <span class="sr">${t.title}</span></button></form>`;
}

function item(t: WaitingTodo, csrf: string): SafeHtml {
  return html`<li data-todo="${t.todo_id}"><h2><code>${t.endpoint_slug}</code>/${t.queue}: ${t.title}</h2>
<p>Asked ${isoTime(t.asked_at)}, times out ${isoTime(t.expires_at)} (<a href="/todos/${t.todo_id}">todo <code>${t.todo_id}</code></a>)</p>
<blockquote data-field="question">${t.question}</blockquote>${answerForm(t, csrf)}</li>`;
}

function listing(todos: WaitingTodo[], csrf: string): SafeHtml {
  if (todos.length === 0) return html`<p class="note">Nothing waits on you: no agent has asked a question.</p>`;
  const more =
    todos.length >= NEEDS_YOU_SHOWN
      ? html`<p class="note">The oldest ${NEEDS_YOU_SHOWN} are shown; answer some to see the rest.</p>`
      : '';
  return html`<ul class="needs-you">${joinHtml(todos.map((t) => item(t, csrf)))}</ul>${more}`;
}

export function needsYouPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get<{ Querystring: { answered?: string } }>('/needs-you', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const todos = await needsYou(deps.operator, session.principal.human.id);
    const answered = request.query.answered;
    const notice = answered
      ? html`<p class="notice" role="status" data-done="answered">Answered <code>${answered}</code>: it is back first in its queue.</p>`
      : '';
    const body = html`${notice}<p class="note">Todos your agents parked on a question to you (ask_human). Answer one and it goes back first in its queue; the agent that claims it next reads your answer.</p>${listing(todos, session.csrf)}`;
    return sendHtml(reply, 200, page('Needs you', body, chromeOf(session, 'needs')));
  });

  app.post<{ Params: { id: string }; Body: Form }>('/needs-you/:id/answer', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { id } = request.params;
    const choice = field(request.body, 'choice');
    const text = field(request.body, 'text');
    const input = choice !== '' ? { choice: /^\d+$/.test(choice) ? Number(choice) : choice } : { text };
    try {
      await answerHumanTodo(deps.operator, session.principal.human, id, input);
      return await reply.redirect(`/needs-you?answered=${encodeURIComponent(id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'todo');
      const status = isAppError(err, 'conflict') ? 409 : isAppError(err, 'invalid_argument') ? 400 : 0;
      if (status === 0 || !isAppError(err)) throw err;
      const body = html`${errorLine(`Not answered: ${err.message}.`)}<p><a href="/needs-you">Back to Needs you</a></p>`;
      return sendHtml(reply, status, page('Not answered', body, chromeOf(session, 'needs')));
    }
  });
}
