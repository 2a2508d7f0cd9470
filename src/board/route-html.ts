// A todo's route in its drawer and on its page (docs/design/routing.md, "The trace"):
// the webhook event that made it (linked to the endpoint's Received view), the rule that
// matched (its name and position) and the trace steps that concern this todo, as the
// get_todo use case answers them (src/todos/read.ts routeOf). Every step value came from a
// provider's payload or a rule's expression, so all of it goes through the `html` tag.

import { stepFields } from '../domain/routing.js';
import type { eventOfRoute } from '../webhooks/events.js';
import type { TodoRoute } from '../todos/read.js';
import { html, isoTime, joinHtml, type SafeHtml } from './html.js';

export type RouteEvent = NonNullable<Awaited<ReturnType<typeof eventOfRoute>>>;
type Step = Record<string, unknown> & { step?: unknown };

const dash = html`<span class="note">—</span>`;

/** The trace as stored is JSON: read each step defensively. */
function stepsOf(route: TodoRoute): Step[] {
  return route.steps.filter((s): s is Step => typeof s === 'object' && s !== null && !Array.isArray(s));
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** "name (rules[2] · rl_…)" for the rule that matched, or the default when none did. */
function ruleOf(steps: Step[]): SafeHtml {
  const made = steps.find((s) => s.step === 'route');
  const decide = steps.find((s) => s.step === 'decide');
  const id = str(made?.rule) ?? str(decide?.rule);
  if (id === 'default') return html`<span data-rule="default">none matched: the webhook's default</span>`;
  const matched = steps.find((s) => s.step === 'rule' && s.rule_id === id) ?? steps.find((s) => s.step === 'rule');
  if (!matched) return id ? html`<code data-rule="${id}">${id}</code>` : dash;
  const position = typeof matched.position === 'number' ? html`rules[${matched.position}] · ` : '';
  return html`<span data-rule="${str(matched.rule_id) ?? ''}">${str(matched.name) || 'unnamed'} <span class="note">(${position}<code>${str(matched.rule_id) ?? ''}</code>)</span></span>`;
}

/** One step: its kind, then each field as `name: value` (objects and lists as JSON). */
function stepItem(s: Step): SafeHtml {
  const kind = str(s.step) ?? '?';
  const fields = stepFields(s).map(
    ([k, v]) => html`<span class="step-field">${k}: <code>${valueText(v)}</code></span>`,
  );
  return html`<li data-step="${kind}"><strong>${kind}</strong> ${joinHtml(fields, ' · ')}</li>`;
}

function eventLine(route: TodoRoute, event: RouteEvent | null): SafeHtml {
  if (!event) return html`<code>${route.event_id}</code> <span class="note">(no longer kept)</span>`;
  const what = [event.provider, event.type].filter(Boolean).join(' ');
  return html`<a href="/endpoints/${event.endpoint_id}/events/${event.id}" data-event-link><code>${event.id}</code></a> · ${what}${event.actor ? html` by ${event.actor}` : ''} · ${isoTime(event.received_at)}`;
}

/** The route section; nothing for a todo no webhook event made. */
export function routeSection(route: TodoRoute | undefined, event: RouteEvent | null): SafeHtml {
  if (!route) return html``;
  const steps = stepsOf(route);
  return html`<section class="slot" data-slot="route"><h3>Route</h3>
<dl><dt>Event</dt><dd data-field="event">${eventLine(route, event)}</dd>
<dt>Disposition</dt><dd><span class="chip" data-disposition="${route.disposition}">${route.disposition}</span></dd>
<dt>Rule</dt><dd data-field="rule">${ruleOf(steps)}</dd></dl>
${steps.length ? html`<ol class="trace">${steps.map(stepItem)}</ol>` : html`<p class="note">No trace steps kept.</p>`}</section>`;
}
