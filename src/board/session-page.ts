// A session's own page: its id, which client, whether its notification stream is open
// ("reconnect needed" when not), the unheard mark, its last ring, the claims it holds,
// when it was last seen. The message queue panel (docs/design/message-queue.md) lands in its data-slot.

import type { FastifyInstance } from 'fastify';
import { sessionOfHuman } from '../endpoints/board.js';
import { isAppError } from '../domain/errors.js';
import { chromeOf, sendHtml, notFoundPage, signedIn } from './guard.js';
import { lastRing, streamState, unheardMark } from './endpoint-html.js';
import { html, isoTime, page, roughDuration } from './html.js';
import type { MessageDeps } from '../messages/context.js';
import { queueStatus } from '../messages/queue.js';
import { actorOf, messagePanel } from './messages.js';
import type { BoardDeps } from './guard.js';

export function sessionPage(app: FastifyInstance, deps: BoardDeps & { messages: MessageDeps }): void {
  app.get<{ Params: { id: string } }>('/sessions/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const now = deps.now();
    let view;
    try {
      view = await sessionOfHuman(deps.operator, session.principal.human.id, request.params.id, now);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'session');
      throw err;
    }
    const { endpoint, session: s } = view;
    const body = html`<p><a href="/endpoints/${endpoint.slug}">${endpoint.name}</a></p>
<dl><dt>Session</dt><dd><code>${s.id}</code></dd>
<dt>Client</dt><dd>${s.client_name ?? 'unknown'} ${s.client_version ?? ''} ${unheardMark(s)}</dd>
<dt>Stream</dt><dd>${streamState(s)}</dd>
<dt>Last ring</dt><dd data-field="last_ring">${lastRing(s, now)}</dd>
<dt>Claims held</dt><dd data-field="claims_held">${s.claims_held}</dd>
<dt>Last seen</dt><dd>${roughDuration(now.getTime() - s.last_seen_at.getTime())} ago</dd>
<dt>Opened</dt><dd>${isoTime(s.created_at)}</dd></dl>
${messagePanel(await queueStatus(deps.messages, actorOf(session), s.id), session)}`;
    return sendHtml(reply, 200, page(`Session of ${endpoint.name}`, body, chromeOf(session, 'endpoints')));
  });
}
