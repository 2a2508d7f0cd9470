// The settings page's message queue capacity (docs/design/message-queue.md, "Capacity"):
// configured and effective value, the source badge (default, setting or environment), "0
// means unlimited", and the control: admins save through the capacity setting (persisted,
// then applied everywhere), members read it; when SWITCHBOARD_QUEUE_MAX_PER_SESSION locks
// it, the control is disabled with an explanation naming the variable.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Capacity } from '../domain/messages.js';
import { isAppError } from '../domain/errors.js';
import type { BoardSession } from '../identity/board-sessions.js';
import type { MessageDeps } from '../messages/context.js';
import { field, sendHtml, signedInForm, chromeOf, type Form } from './guard.js';
import { withError } from './field-errors.js';
import { csrfField, errorLine, html, page, type SafeHtml } from './html.js';
import type { BoardDeps } from './guard.js';

export const ENV_VARIABLE = 'SWITCHBOARD_QUEUE_MAX_PER_SESSION';

export function capacitySection(c: Capacity, session: BoardSession, error?: string, typed?: string): SafeHtml {
  const admin = session.principal.human.role === 'admin';
  const editable = admin && !c.locked;
  const why = c.locked
    ? html`<p class="note" id="mq-why">Locked: set by <code>${ENV_VARIABLE}</code> in the server's environment; change it there.</p>`
    : admin
      ? ''
      : html`<p class="note" id="mq-why">Only an admin can change this.</p>`;
  const value = typed ?? String(c.configured ?? c.effective);
  const button = editable
    ? html`<div class="actions"><button type="submit" class="primary">Save capacity</button></div>`
    : '';
  return html`<section class="slot" data-slot="message-queue-capacity" aria-labelledby="mq-cap"><h2 id="mq-cap">Message queue capacity</h2>
<p>Effective: <strong data-setting="capacity-effective">${c.effective === 0 ? 'unlimited' : c.effective}</strong> messages per session
<span class="chip" data-setting="capacity-source">${c.source}</span>${c.locked ? html` <span class="chip warn">locked</span>` : ''}
· configured: <span data-setting="capacity-configured">${c.configured ?? 'none'}</span></p>
${withError(
  html`<form method="post" action="/settings/message-queue">${csrfField(session.csrf)}
<label for="mq-max">Messages per session (0 means unlimited)</label>
<input id="mq-max" name="max_per_session" inputmode="numeric" value="${value}"${editable ? '' : html` disabled aria-describedby="mq-why"`}>
${why}${button}</form>`,
  error,
)}</section>`;
}

export function capacityPages(
  app: FastifyInstance,
  deps: BoardDeps & { messages: MessageDeps },
  render: (
    reply: FastifyReply,
    session: BoardSession,
    status: number,
    capacity?: { error: string; typed: string },
  ) => Promise<unknown>,
): void {
  const { messages } = deps;
  app.post<{ Body: Form }>('/settings/message-queue', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    if (session.principal.human.role !== 'admin') {
      const body = errorLine('Only an admin can change the message queue capacity.');
      return sendHtml(reply, 403, page('Not saved', body, chromeOf(session, 'settings')));
    }
    const typed = field(request.body, 'max_per_session').trim();
    const input = { max_per_session: /^\d+$/.test(typed) ? Number(typed) : typed };
    try {
      await messages.capacity.save(input);
    } catch (err) {
      if (!isAppError(err, 'invalid_argument') && !isAppError(err, 'conflict')) throw err;
      return render(reply, session, err.code === 'conflict' ? 409 : 400, { error: err.message, typed });
    }
    return reply.redirect('/settings', 303);
  });
}
