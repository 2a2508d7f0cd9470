// HTML for the people page (docs/design/people.md): the list of humans (an admin sees
// everyone with the actions of the human lifecycle, a member sees only themself), the
// invite form, the own-password form, the one-time link reveal with its copy button, and
// one human's tokens with revoke buttons. Errors sit next to the field or row they name.

import type { ApiToken, Human, HumanAuditEntry } from '../identity/principal.js';
import { copyBlock } from './copy.js';
import { fieldError, formError, invalidAttrs } from './field-errors.js';
import { csrfField, html, isoTime, type SafeHtml, joinHtml } from './html.js';

export type Person = Human & { live_tokens: number };

/** What went wrong on the last form, kept to show next to its field or row. */
export interface PeopleErrors {
  /** A row action refused (the last-admin refusal among them), shown in that row. */
  row?: { id: string; message: string };
  invite?: { message: string; values: Record<string, string> };
  password?: { message: string };
  /** A notice after a successful action (e.g. "Password changed."). */
  notice?: string;
}

const post = (action: string, csrf: string, inner: SafeHtml, extra: SafeHtml = html``) =>
  html`<form method="post" action="${action}" class="inline"${extra}>${csrfField(csrf)}${inner}</form>`;

function rowActions(p: Person, csrf: string): SafeHtml {
  const base = `/people/${p.id}`;
  const who = html`<span class="sr">${p.email}</span>`;
  const next = p.state === 'active' ? 'disabled' : 'active';
  const state = post(
    `${base}/state`,
    csrf,
    html`<input type="hidden" name="state" value="${next}"><button type="submit"${next === 'disabled' ? html` class="danger"` : ''}>${next === 'disabled' ? 'Disable' : 'Enable'} ${who}</button>`,
    next === 'disabled' ? html` hx-confirm="Disable ${p.email}? Their sign-ins end at once."` : html``,
  );
  const roles = joinHtml(
    (['member', 'admin'] as const).map(
      (r) => html`<option value="${r}"${p.role === r ? ' selected' : ''}>${r}</option>`,
    ),
  );
  const role = post(
    `${base}/role`,
    csrf,
    html`<select name="role" aria-label="Role of ${p.email}">${roles}</select> <button type="submit">Change role ${who}</button>`,
  );
  const compromised = (name: string, label: string) =>
    html`<label class="inline"><input type="checkbox" name="${name}" value="on"> ${label}<span class="sr"> of ${p.email}</span></label>`;
  const reset =
    p.state === 'active'
      ? post(
          `${base}/reset`,
          csrf,
          html`<button type="submit">Reset link ${who}</button> ${compromised('revoke_oauth_grants', 'also revoke OAuth grants')} ${compromised('rotate_endpoint_credentials', 'also replace endpoint credentials')}`,
        )
      : '';
  const tokens = html`<a href="${base}/tokens">Tokens <span class="sr">of ${p.email}</span></a>`;
  return html`${state} ${role} ${reset} ${tokens}`;
}

function personRow(p: Person, admin: boolean, csrf: string, errors: PeopleErrors): SafeHtml {
  const error =
    errors.row?.id === p.id
      ? html`<p class="error" role="alert" data-error-for="${p.id}">${errors.row.message}</p>`
      : '';
  const state = html`<span class="chip ${p.state === 'active' ? 'open' : 'deferred'}">${p.state}</span>`;
  return html`<tr data-human="${p.id}" data-state="${p.state}" data-role="${p.role}"><td>${p.email}</td><td>${p.display_name || '—'}</td>
<td data-field="role">${p.role}</td><td data-field="state">${state}</td><td>${isoTime(p.created_at)}</td><td data-field="tokens">${p.live_tokens}</td>
${admin ? html`<td>${rowActions(p, csrf)}${error}</td>` : ''}</tr>`;
}

function peopleTable(people: Person[], admin: boolean, csrf: string, errors: PeopleErrors): SafeHtml {
  const head = joinHtml(
    ['Email', 'Name', 'Role', 'State', 'Created', 'Live tokens', ...(admin ? ['Actions'] : [])].map(
      (h) => html`<th scope="col">${h}</th>`,
    ),
  );
  const rows = joinHtml(people.map((p) => personRow(p, admin, csrf, errors)));
  return html`<table><caption class="note">${admin ? 'Everyone who can sign in' : 'You'}</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function inviteForm(csrf: string, invite: PeopleErrors['invite']): SafeHtml {
  const v = invite?.values ?? {};
  const m = invite?.message;
  const roles = joinHtml(
    (['member', 'admin'] as const).map(
      (r) => html`<option value="${r}"${(v.role ?? 'member') === r ? ' selected' : ''}>${r}</option>`,
    ),
  );
  return html`<section aria-labelledby="p-invite"><h2 id="p-invite">Invite someone</h2>
<p class="note">The invite link (valid 7 days) is shown once: send it to them; it opens a page where they set a password.</p>
${formError(m, ['email', 'display_name', 'role'])}<form method="post" action="/people">${csrfField(csrf)}
<label for="i-email">Email</label><input id="i-email" name="email" type="email" required value="${v.email ?? ''}"${invalidAttrs('i-email', 'email', m)}>${fieldError('i-email', 'email', m)}
<label for="i-name">Name (optional)</label><input id="i-name" name="display_name" value="${v.display_name ?? ''}"${invalidAttrs('i-name', 'display_name', m)}>${fieldError('i-name', 'display_name', m)}
<label for="i-role">Role</label><select id="i-role" name="role">${roles}</select>${fieldError('i-role', 'role', m)}
<div class="actions"><button type="submit" class="primary">Invite</button></div></form></section>`;
}

function passwordForm(csrf: string, password: PeopleErrors['password']): SafeHtml {
  const m = password?.message;
  return html`<section aria-labelledby="p-password"><h2 id="p-password">Your password</h2>
${formError(m, ['current', 'new'])}<form method="post" action="/people/me/password">${csrfField(csrf)}
<label for="pw-current">Current password</label><input id="pw-current" name="current" type="password" autocomplete="current-password" required${invalidAttrs('pw-current', 'current', m)}>${fieldError('pw-current', 'current', m)}
<label for="pw-new">New password (at least 8 characters)</label><input id="pw-new" name="new" type="password" autocomplete="new-password" required minlength="8"${invalidAttrs('pw-new', 'new', m)}>${fieldError('pw-new', 'new', m)}
<label class="check"><input type="checkbox" name="sign_out_others" value="1" checked> Sign out everywhere else (other board sessions and API tokens)</label>
<div class="actions"><button type="submit" class="primary">Change password</button></div></form></section>`;
}

export function peopleBody(people: Person[], viewer: Human, csrf: string, errors: PeopleErrors = {}): SafeHtml {
  const admin = viewer.role === 'admin';
  const shown = admin ? people : people.filter((p) => p.id === viewer.id);
  const notice = errors.notice ? html`<p role="status" class="notice">${errors.notice}</p>` : '';
  return html`${notice}<section aria-labelledby="p-list"><h2 id="p-list">${admin ? 'Everyone' : 'Your account'}</h2>${peopleTable(shown, admin, csrf, errors)}</section>
${admin ? inviteForm(csrf, errors.invite) : ''}${passwordForm(csrf, errors.password)}`;
}

/** A one-time link (invite or reset) shown once, with a copy button. */
export function linkReveal(what: string, email: string, url: string, expires: Date | null, ended = ''): SafeHtml {
  return html`<p role="status">${what} for <strong>${email}</strong>. It is shown <strong>only this once</strong> and works once${expires ? html`, until ${isoTime(expires)}` : ''}.</p>
${ended ? html`<p data-slot="reset-ended">${ended}</p>` : ''}
${copyBlock('one-time-link', url, 'the link')}
<p><a href="/people">Back to people</a></p>`;
}

/** What a compromised-account reset also ended, in words; empty when it ended nothing more. */
export function resetEnded(r: {
  oauth_grants_revoked?: number;
  sessions_closed?: number;
  endpoint_credentials_rotated?: number;
}): string {
  const parts: string[] = [];
  if (r.oauth_grants_revoked !== undefined) {
    parts.push(`OAuth grants revoked: ${r.oauth_grants_revoked} (MCP sessions closed: ${r.sessions_closed ?? 0}).`);
  }
  if (r.endpoint_credentials_rotated !== undefined) {
    parts.push(
      `Endpoint credentials replaced: ${r.endpoint_credentials_rotated}; the owner rotates each endpoint's credential for one they can use.`,
    );
  }
  return parts.join(' ');
}

/** A detail object as "key: value" pairs (nested values as JSON), never raw JSON. */
function detailText(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/** What was done to the human, newest first (docs/design/people.md, "The audit"). */
export function historyBody(human: Human, entries: HumanAuditEntry[], more: boolean): SafeHtml {
  if (entries.length === 0) return html`<h2>History</h2><p class="note">Nothing recorded.</p>`;
  const rows = joinHtml(
    entries.map(
      (e) =>
        html`<tr data-audit="${e.action}"><td>${isoTime(e.at)}</td><td>${e.action}</td><td>${e.actor_email ?? e.actor_human_id}</td><td>${detailText(e.detail)}</td></tr>`,
    ),
  );
  const head = joinHtml(['When', 'Action', 'By', 'Detail'].map((h) => html`<th scope="col">${h}</th>`));
  const tail = more ? html`<p class="note">Older entries: <code>switchboard human audit ${human.email}</code></p>` : '';
  return html`<h2>History</h2><table><caption class="note">What was done to ${human.email}, newest first</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${tail}`;
}

export function tokensBody(human: Human, tokens: ApiToken[], csrf: string, now: Date): SafeHtml {
  const live = (t: ApiToken) => !t.revoked_at && (!t.expires_at || t.expires_at > now);
  const rows = joinHtml(
    tokens.map((t) => {
      const state = t.revoked_at ? 'revoked' : live(t) ? 'live' : 'expired';
      const revoke = live(t)
        ? post(
            `/people/${human.id}/tokens/${t.id}/revoke`,
            csrf,
            html`<button type="submit" class="danger">Revoke <span class="sr">${t.name}</span></button>`,
          )
        : '';
      return html`<tr data-token="${t.id}" data-state="${state}"><td>${t.name}</td><td>${t.kind}</td><td>${state}</td>
<td>${isoTime(t.created_at)}</td><td>${t.last_used_at ? isoTime(t.last_used_at) : 'never'}</td><td>${t.expires_at ? isoTime(t.expires_at) : 'never'}</td><td>${revoke}</td></tr>`;
    }),
  );
  const head = joinHtml(
    ['Name', 'Kind', 'State', 'Created', 'Last used', 'Expires', 'Actions'].map((h) => html`<th scope="col">${h}</th>`),
  );
  const table = tokens.length
    ? html`<table><caption class="note">API tokens of ${human.email}</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="note">No API tokens.</p>`;
  return html`<p><a href="/people">All people</a></p>${table}`;
}
