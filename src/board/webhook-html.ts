// HTML for an endpoint's webhooks page (docs/design/intake.md, "Webhooks with a
// provider"): the table with each webhook's actions, the add form, and the one-time
// reveal of a URL or generated signing secret. The URL and a generated secret exist in
// clear only in the answer that made them, so the reveal is rendered on that answer and
// never again; the table says what each webhook checks, never the secret itself.

import type { listWebhooksOf } from '../webhooks/manage.js';
import { PROVIDERS } from '../webhooks/verify.js';
import { copyBlock } from './copy.js';
import { fieldError, invalidAttrs, placeError } from './field-errors.js';
import { csrfField, errorLine, html, isoTime, type SafeHtml, joinHtml } from './html.js';

type Webhook = Awaited<ReturnType<typeof listWebhooksOf>>[number];

export const CREATE_FIELDS = ['provider', 'queue', 'name', 'secret'] as const;
export type CreateValues = Partial<Record<(typeof CREATE_FIELDS)[number], string>>;

/** What each provider checks besides the URL, in words. */
const PROVIDER_LABELS: Record<string, string> = {
  token: 'token: the URL alone',
  github: 'GitHub',
  gitlab: 'GitLab',
  gitea: 'Gitea or Forgejo',
  stripe: 'Stripe',
  slack: 'Slack',
  standard: 'Standard Webhooks (Svix and others)',
};

/** What a POST just made, shown once on its own answer. */
export interface Reveal {
  what: string;
  url?: string;
  secret?: string;
  /** Until when the replaced signing secret still verifies (null: retired at once). */
  previousUntil?: Date | null;
}

export function revealSection(r: Reveal): SafeHtml {
  const once = r.url || r.secret;
  const grace =
    r.previousUntil === undefined
      ? ''
      : r.previousUntil
        ? html` The previous secret still verifies until ${isoTime(r.previousUntil)}.`
        : ' The previous secret no longer verifies.';
  const lead = once
    ? html`${r.what} What follows is shown <strong>only this once</strong>: copy it into the provider's settings now.${grace}`
    : html`${r.what}${grace}`;
  return html`<section aria-labelledby="w-reveal" data-reveal><h2 id="w-reveal">${once ? 'Shown once' : 'Done'}</h2><p role="status">${lead}</p>
${r.url ? html`<h3>URL</h3>${copyBlock('webhook-url', r.url, 'the webhook URL')}` : ''}
${r.secret ? html`<h3>Signing secret</h3>${copyBlock('webhook-secret', r.secret, 'the signing secret')}` : ''}</section>`;
}

const post = (action: string, csrf: string, inner: SafeHtml, confirm = '') =>
  html`<form method="post" action="${action}" class="inline"${confirm ? html` hx-confirm="${confirm}"` : ''}>${csrfField(csrf)}${inner}</form>`;

/** Set a provider-issued secret: its own field per webhook, so an error lands under the right one. */
function setSecretForm(w: Webhook, action: string, csrf: string, error: string | undefined): SafeHtml {
  const id = `secret-${w.id}`;
  const form = post(
    `${action}/secret`,
    csrf,
    html`<label for="${id}">Secret the provider issued <span class="sr">for ${w.name}</span></label><input id="${id}" name="secret" type="password" autocomplete="off" minlength="16" maxlength="256" required>
<button type="submit">Set secret <span class="sr">of ${w.name}</span></button>`,
  );
  if (!error) return form;
  const placed = placeError(form, error, id);
  return placed.placed ? placed.form : html`${errorLine(error)}${form}`;
}

function actions(w: Webhook, base: string, csrf: string, error: string | undefined): SafeHtml {
  const action = `${base}/${w.id}`;
  const named = (label: string) => html`${label} <span class="sr">of ${w.name}</span>`;
  const signed = w.provider !== 'token';
  return joinHtml(
    [
      html`<a href="${action}/rules">${named('Rules')}</a>`,
      post(
        `${action}/rotate`,
        csrf,
        html`<button type="submit">${named('New URL')}</button>`,
        'The current URL stops at once.',
      ),
      signed ? post(`${action}/new-secret`, csrf, html`<button type="submit">${named('New secret')}</button>`) : '',
      signed ? setSecretForm(w, action, csrf, error) : '',
      post(
        `${action}/delete`,
        csrf,
        html`<button type="submit" class="danger">Delete <span class="sr">${w.name}</span></button>`,
        `Delete the webhook ${w.name}? Its URL stops at once; its received events stay.`,
      ),
    ].filter(Boolean),
    ' ',
  );
}

function row(w: Webhook, base: string, csrf: string, error?: { id: string; message: string }): SafeHtml {
  const checks =
    w.provider === 'token'
      ? html`<span class="chip warn">URL only</span>`
      : html`<span class="chip open">signed</span> <span class="note">${PROVIDER_LABELS[w.provider] ?? w.provider}</span>`;
  const rotated = w.rotated_at ? html`<br><span class="note">URL replaced ${isoTime(w.rotated_at)}</span>` : '';
  const last = w.last_delivery_at ? isoTime(w.last_delivery_at) : 'never';
  const message = error?.id === w.id ? error.message : undefined;
  return html`<tr data-webhook="${w.id}" data-provider="${w.provider}"><td>${w.name}</td><td>${w.provider}</td>
<td><code>${w.queue}</code></td><td>${checks}</td><td>${isoTime(w.created_at)}${rotated}</td><td>${last}</td>
<td>${actions(w, base, csrf, message)}</td></tr>`;
}

export function webhookTable(
  webhooks: Webhook[],
  base: string,
  csrf: string,
  error?: { id: string; message: string },
): SafeHtml {
  if (webhooks.length === 0) return html`<p class="note">No webhooks yet.</p>`;
  const head = joinHtml(
    ['Name', 'Provider', 'Queue', 'Checks', 'Created', 'Last delivery', 'Actions'].map(
      (h) => html`<th scope="col">${h}</th>`,
    ),
  );
  return html`<p class="note">A webhook's URL is its credential and is shown only when it is made: "New URL" makes another and the old one stops at once. "New secret" or "Set secret" replaces a signing secret; the replaced one still verifies for a grace period, so deliveries sent meanwhile are not lost.</p>
<table><caption class="note">Webhooks</caption><thead><tr>${head}</tr></thead>
<tbody>${webhooks.map((w) => row(w, base, csrf, error))}</tbody></table>`;
}

export function createForm(queues: string[], base: string, csrf: string, v: CreateValues, error?: string): SafeHtml {
  const options = (values: readonly string[], chosen: string | undefined, label: (o: string) => string) =>
    joinHtml(values.map((o) => html`<option value="${o}"${o === chosen ? ' selected' : ''}>${label(o)}</option>`));
  const select = (name: 'provider' | 'queue', label: string, list: SafeHtml) =>
    html`<label for="w-${name}">${label}</label><select id="w-${name}" name="${name}"${invalidAttrs(`w-${name}`, name, error)}>${list}</select>${fieldError(`w-${name}`, name, error)}`;
  return html`<form method="post" action="${base}">${csrfField(csrf)}
${select(
  'provider',
  'Provider',
  options(PROVIDERS, v.provider, (p) => PROVIDER_LABELS[p] ?? p),
)}
${select(
  'queue',
  'Queue its todos go to',
  options(queues, v.queue, (q) => q),
)}
<label for="w-name">Name (optional; default: the queue)</label><input id="w-name" name="name" maxlength="100" value="${v.name ?? ''}"${invalidAttrs('w-name', 'name', error)}>${fieldError('w-name', 'name', error)}
<label for="w-secret">Signing secret the provider issued (optional: Stripe's <code>whsec_…</code>, Slack's signing secret; empty: one is generated)</label><input id="w-secret" name="secret" type="password" autocomplete="off" maxlength="256"${invalidAttrs('w-secret', 'secret', error)}>${fieldError('w-secret', 'secret', error)}
<div class="actions"><button type="submit" class="primary">Add webhook</button></div></form>`;
}
