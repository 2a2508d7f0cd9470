// The endpoint card's own forms beyond revoke and delete: "Run self-test"
// (docs/design/doorbell-acknowledgement.md), whose result page shows the verdict live
// (htmx polls it while pending; without JavaScript the page refreshes itself) with the
// hints, the owner's clock in / clock out (an operator presence override,
// docs/design/hooks-and-presence.md) and accept / refuse agent messages
// (docs/design/message-queue.md, "Agent messages").

import type { FastifyInstance } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { getOwnedTest, startOwnedTest } from '../endpoints/doorbell-tests.js';
import { resolveEndpoint, updateEndpoint } from '../endpoints/manage.js';
import { setPresence } from '../presence/manage.js';
import { backTo, chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { errorLine, html, isoTime, page, type SafeHtml } from './html.js';
import type { BoardDeps } from './guard.js';

type RefParams = { Params: { ref: string } };

/** How often a pending verdict is re-read, with or without JavaScript. */
const POLL_SECONDS = 2;

type Report = Awaited<ReturnType<typeof getOwnedTest>>;

function verdictSection(report: Report, href: string): SafeHtml {
  const pending = report.verdict === 'pending';
  const poll = pending
    ? html` hx-get="${href}" hx-trigger="every ${POLL_SECONDS}s" hx-select="#self-test-result" hx-swap="outerHTML"`
    : '';
  const hints = report.hints.length
    ? html`<h3>Hints</h3><ul data-hints>${report.hints.map((h) => html`<li>${h}</li>`)}</ul>`
    : '';
  const delivered = report.delivered.written
    ? html`written to the stream${report.delivered.at ? html` at ${isoTime(new Date(report.delivered.at))}` : ''}`
    : 'not written';
  const heard =
    report.claimed_within_seconds === null ? 'no claim yet' : `claimed within ${report.claimed_within_seconds} s`;
  return html`<section id="self-test-result" aria-live="polite"${poll}>
<p>Verdict: <strong class="chip ${report.verdict === 'pass' ? 'open' : pending ? '' : 'warn'}" data-verdict="${report.verdict}">${report.verdict}</strong></p>
<dl><dt>Stream attached</dt><dd>${report.stream_attached ? 'yes' : 'no'}</dd><dt>Delivered</dt><dd>${delivered}</dd>
<dt>Heard</dt><dd>${heard}</dd><dt>Report after</dt><dd>${isoTime(new Date(report.report_after))}</dd>
<dt>Clients</dt><dd>${report.channel_capability.clients.map((c) => `${c.name ?? 'unknown'} ${c.version ?? ''}`).join(', ') || 'none'}</dd></dl>
<p class="note">${report.channel_capability.note}</p>${hints}</section>`;
}

export function endpointActions(app: FastifyInstance, deps: BoardDeps): void {
  app.post<RefParams & { Body: Form }>('/endpoints/:ref/self-test', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const ref = request.params.ref;
    try {
      const started = await startOwnedTest(deps.operator, session.principal.human.id, ref, {}, deps.now());
      return reply.redirect(`/endpoints/${encodeURIComponent(ref)}/self-test/${started.test_id}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      if (!isAppError(err, 'resource_exhausted') && !isAppError(err, 'conflict')) throw err;
      const id = (err.details as { test_id?: string } | undefined)?.test_id;
      const link = id ? html`<p><a href="/endpoints/${ref}/self-test/${id}">The running test</a></p>` : '';
      return sendHtml(
        reply,
        409,
        page('Self-test not started', html`${errorLine(err.message)}${link}`, chromeOf(session, 'endpoints')),
      );
    }
  });

  app.get<{ Params: { ref: string; id: string } }>('/endpoints/:ref/self-test/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const { ref, id } = request.params;
    let report: Report;
    try {
      report = await getOwnedTest(deps.operator, session.principal.human.id, ref, id);
    } catch (err) {
      if (isAppError(err, 'not_found') || isAppError(err, 'invalid_argument'))
        return notFoundPage(reply, session, 'self-test');
      throw err;
    }
    // Without JavaScript the page refreshes itself until the verdict is in.
    if (report.verdict === 'pending') void reply.header('Refresh', String(POLL_SECONDS));
    const href = `/endpoints/${ref}/self-test/${id}`;
    const body = html`<p><a href="/endpoints/${ref}">Back to the endpoint</a></p>${verdictSection(report, href)}`;
    return sendHtml(reply, 200, page('Doorbell self-test', body, chromeOf(session, 'endpoints')));
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/presence', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const presence = field(request.body, 'presence') === 'in' ? 'in' : 'out';
    try {
      const endpoint = await resolveEndpoint(deps.operator, session.principal.human.id, request.params.ref);
      if (endpoint.revoked_at) return notFoundPage(reply, session, 'endpoint');
      await setPresence({ db: deps.operator.db }, endpoint.id, session.principal.human.id, { presence });
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'endpoint');
      throw err;
    }
    return reply.redirect(backTo(request.body, `/endpoints/${encodeURIComponent(request.params.ref)}`), 303);
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/agent-messages', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const accept = field(request.body, 'accept') === 'on';
    const ref = request.params.ref;
    try {
      await updateEndpoint(
        deps.operator,
        session.principal.human.id,
        ref,
        { accept_agent_messages: accept },
        deps.now(),
      );
    } catch (err) {
      if (isAppError(err, 'not_found') || isAppError(err, 'conflict')) return notFoundPage(reply, session, 'endpoint');
      throw err;
    }
    return reply.redirect(backTo(request.body, `/endpoints/${encodeURIComponent(ref)}`), 303);
  });
}
