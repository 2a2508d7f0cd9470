// The budget editor (docs/design/admission.md, "The board"): a full page per endpoint and
// queue with the current strip, the form (a full replace through the admission service,
// audited with the signed-in human) and the audit list. A mistake re-renders the page
// with the field named and the values typed so far; another human's endpoint, or a queue
// the endpoint is not granted, answers 404.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { budgetEditorView } from '../budgets/board.js';
import { clearPolicy, setPolicy } from '../budgets/service.js';
import { isAppError } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { budgetEditor, valuesOf, type BudgetValues } from './budget-html.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { html, page } from './html.js';
import type { BoardDeps } from './guard.js';

type Params = { Params: { ref: string; queue: string } };

async function target(deps: BoardDeps, session: BoardSession, ref: string, queue: string) {
  try {
    const endpoint = await resolveEndpoint(deps.operator, session.principal.human.id, ref);
    return endpoint.queues.includes(queue) ? endpoint : null;
  } catch (err) {
    if (isAppError(err, 'not_found')) return null;
    throw err;
  }
}

const number = (text: string | undefined) => {
  const t = (text ?? '').trim();
  if (t === '') return null;
  return /^\d+$/.test(t) ? Number(t) : t;
};

/** The form's fields → the policy body the API takes. */
function policyInput(v: BudgetValues): Record<string, unknown> {
  const window = v.period
    ? {
        period: v.period,
        tz: v.tz?.trim(),
        start: v.start?.trim(),
        ...(v.period === 'week' ? { weekday: v.weekday } : {}),
      }
    : null;
  return { max_in_flight: number(v.max_in_flight), max_claims_per_window: number(v.max_claims_per_window), window };
}

async function render(
  deps: BoardDeps,
  session: BoardSession,
  reply: FastifyReply,
  endpoint: { id: string; slug: string; name: string },
  queue: string,
  status = 200,
  typed?: { values: BudgetValues; error: string },
) {
  const view = await budgetEditorView(deps.operator, endpoint.id, queue);
  const body = html`<p><a href="/endpoints/${endpoint.slug}">${endpoint.name}</a> · <a href="/">Queues</a></p>${budgetEditor(
    {
      base: `/endpoints/${endpoint.slug}/budgets/${queue}`,
      csrf: session.csrf,
      status: view.status,
      audit: view.audit,
      values: typed?.values ?? valuesOf(view.status),
      viewer: { id: session.principal.human.id, email: session.principal.human.email },
      ...(typed ? { error: typed.error } : {}),
    },
  )}`;
  return sendHtml(reply, status, page(`Budget of ${endpoint.name} · ${queue}`, body, chromeOf(session, 'queues')));
}

export function budgetPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get<Params>('/endpoints/:ref/budgets/:queue', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref, request.params.queue);
    if (!endpoint) return notFoundPage(reply, session, 'queue');
    return render(deps, session, reply, endpoint, request.params.queue);
  });

  app.post<Params & { Body: Form }>('/endpoints/:ref/budgets/:queue', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { queue } = request.params;
    const endpoint = await target(deps, session, request.params.ref, queue);
    if (!endpoint) return notFoundPage(reply, session, 'queue');
    const names = ['max_in_flight', 'max_claims_per_window', 'period', 'tz', 'start', 'weekday'] as const;
    const values = Object.fromEntries(names.map((k) => [k, field(request.body, k)])) as BudgetValues;
    try {
      const actor = { humanId: session.principal.human.id, endpointId: null };
      await setPolicy(deps.operator, actor, endpoint.id, queue, policyInput(values));
    } catch (err) {
      if (!isAppError(err, 'invalid_argument')) throw err;
      return render(deps, session, reply, endpoint, queue, 400, { values, error: err.message });
    }
    return reply.redirect(`/endpoints/${endpoint.slug}/budgets/${queue}`, 303);
  });

  app.post<Params & { Body: Form }>('/endpoints/:ref/budgets/:queue/clear', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { queue } = request.params;
    const endpoint = await target(deps, session, request.params.ref, queue);
    if (!endpoint) return notFoundPage(reply, session, 'queue');
    try {
      await clearPolicy(deps.operator, { humanId: session.principal.human.id, endpointId: null }, endpoint.id, queue);
    } catch (err) {
      if (!isAppError(err, 'not_found')) throw err;
    }
    return reply.redirect(`/endpoints/${endpoint.slug}/budgets/${queue}`, 303);
  });
}
