// The parts of an endpoint card that come from other areas: its notify hooks with their
// health (last status, last error, consecutive failures) and its presence (in or out, from
// which source, until when) with clock in / clock out for the owner
// (docs/design/hooks-and-presence.md), the budget links of its queues
// (docs/design/admission.md), "Run self-test" (docs/design/doorbell-acknowledgement.md) and
// the links to its webhooks and what they received (docs/design/intake.md).
// Read through the hooks and presence use cases, one endpoint at a time.

import type { EndpointView } from '../endpoints/manage.js';
import { HookGuard } from '../hooks/guard.js';
import { listHooks, type HookView } from '../hooks/manage.js';
import { presenceOf, type PresenceView } from '../presence/manage.js';
import { csrfField, html, isoTime, joinHtml, type SafeHtml } from './html.js';

/** The database handle the board's use-case deps carry (a pool, or a transaction's client). */
type Queryable = Parameters<typeof listHooks>[0]['db'];

export interface CardExtras {
  hooks: HookView[];
  presence: PresenceView | null;
}

/** listHooks reads; it never resolves a URL, so the strictest guard is enough here. */
const READ_GUARD = new HookGuard({ allowHttp: false, allowCidrs: [] });

export async function cardExtras(db: Queryable, endpoint: EndpointView): Promise<CardExtras> {
  if (endpoint.state !== 'active') return { hooks: [], presence: null };
  const [hooks, presence] = await Promise.all([
    listHooks({ db, guard: READ_GUARD }, { id: endpoint.id, queues: endpoint.queues }),
    presenceOf({ db }, endpoint.id),
  ]);
  return { hooks: hooks.hooks, presence };
}

/**
 * Whether the owner's other agents may message this endpoint's sessions
 * (docs/design/message-queue.md, "Agent messages"), with the toggle for a live endpoint.
 */
export function agentMessagesField(e: EndpointView, csrf: string): SafeHtml {
  const state = e.accept_agent_messages ? 'accepted' : 'refused';
  const toggle =
    e.state === 'active'
      ? html` <form method="post" action="/endpoints/${e.slug}/agent-messages" class="inline">${csrfField(csrf)}<input type="hidden" name="accept" value="${e.accept_agent_messages ? 'off' : 'on'}"><button type="submit">${e.accept_agent_messages ? 'Refuse' : 'Accept'} <span class="sr">agent messages for ${e.name}</span></button></form>`
      : '';
  return html`<dt>Agent messages</dt><dd data-slot="agent-messages" data-accept="${String(e.accept_agent_messages)}"><span title="messages from your other agents' sessions">${state}</span>${toggle}</dd>`;
}

export function presenceSection(e: EndpointView, p: PresenceView | null, csrf: string): SafeHtml {
  if (!p) return html`<div class="slot" data-slot="presence"></div>`;
  const until = p.until ? html` until ${isoTime(new Date(p.until))}` : '';
  const button = (presence: 'in' | 'out', label: string) =>
    html`<form method="post" action="/endpoints/${e.slug}/presence" class="inline">${csrfField(csrf)}<input type="hidden" name="presence" value="${presence}"><button type="submit">${label} <span class="sr">${e.name}</span></button></form>`;
  return html`<div class="slot presence" data-slot="presence" data-presence="${p.presence}"><strong>Presence</strong>
<span class="chip ${p.presence === 'in' ? 'open' : 'deferred'}">${p.presence}</span> <span class="note">from ${p.source}${until}</span>
${p.presence === 'in' ? button('out', 'Clock out') : button('in', 'Clock in')}</div>`;
}

function hookRow(h: HookView): SafeHtml {
  const health = h.health;
  const status = health.last_status === null ? '—' : String(health.last_status);
  const state = h.enabled ? 'enabled' : `disabled${h.disabled_reason ? `: ${h.disabled_reason}` : ''}`;
  return html`<tr data-hook="${h.hook_id}"><td><code>${h.url}</code></td><td>${state}</td>
<td data-hook-field="last_status">${status}</td><td data-hook-field="last_error">${health.last_error ?? '—'}</td>
<td data-hook-field="failures">${health.consecutive_failures}</td></tr>`;
}

export function hooksSection(hooks: HookView[]): SafeHtml {
  if (hooks.length === 0) return html`<div class="slot" data-slot="hooks"><p class="note">No notify hooks.</p></div>`;
  const head = joinHtml(
    ['URL', 'State', 'Last status', 'Last error', 'Failures in a row'].map((h) => html`<th scope="col">${h}</th>`),
  );
  return html`<div class="slot" data-slot="hooks"><table><caption class="note">Notify hooks</caption><thead><tr>${head}</tr></thead>
<tbody>${hooks.map(hookRow)}</tbody></table></div>`;
}

export function budgetLinks(e: EndpointView): SafeHtml {
  if (e.state !== 'active') return html`<span class="slot" data-slot="budget-link"></span>`;
  const links = e.queues.map((q) => html`<a href="/endpoints/${e.slug}/budgets/${q}">Budget of ${q}</a>`);
  return html`<span class="slot" data-slot="budget-link">${joinHtml(links, ' ')}</span>`;
}

/** Where work comes in (docs/design/intake.md): the webhooks page and the "Received" view. */
export function intakeLinks(e: EndpointView): SafeHtml {
  if (e.state !== 'active') return html`<span class="slot" data-slot="intake-links"></span>`;
  const slug = e.slug;
  return html`<span class="slot" data-slot="intake-links"><a href="/endpoints/${slug}/webhooks">Webhooks</a> <a href="/endpoints/${slug}/events">Received</a></span>`;
}

export function selfTestButton(e: EndpointView, csrf: string): SafeHtml {
  if (e.state !== 'active') return html`<span class="slot" data-slot="self-test"></span>`;
  return html`<form method="post" action="/endpoints/${e.slug}/self-test" class="inline slot" data-slot="self-test">${csrfField(csrf)}<button type="submit">Run self-test <span class="sr">${e.name}</span></button></form>`;
}

/** The cards' views with their extras read. */
export function withExtras<T extends { endpoint: EndpointView }>(
  db: Queryable,
  views: T[],
): Promise<Array<T & { extras: CardExtras }>> {
  return Promise.all(views.map(async (v) => ({ ...v, extras: await cardExtras(db, v.endpoint) })));
}
