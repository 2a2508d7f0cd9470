// Changing a live endpoint from the board (docs/design/mcp-surface.md, "Changing an
// endpoint" and "Rotating a credential"): its display name, its default lease, queues to
// add or remove, and a new credential that keeps the slug, the old one working for a grace the owner
// picks. The same use cases as `PATCH /api/v1/endpoints/{ref}` and `POST …/rotate`; a
// refused field is shown under its input with what was typed kept. Another human's
// endpoint, or a revoked one, answers 404 like an unknown one.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { MAX_CREDENTIAL_GRACE_SECONDS } from '../domain/endpoint.js';
import { resolveEndpoint, rotateEndpointCredential, updateEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { withError } from './field-errors.js';
import {
  chromeOf,
  field,
  fields,
  sendHtml,
  notFoundPage,
  signedIn,
  signedInForm,
  type BoardDeps,
  type Form,
} from './guard.js';
import { csrfField, html, isoTime, joinHtml, page, type SafeHtml } from './html.js';
import { reveal } from './wizard.js';

type RefParams = { Params: { ref: string } };

interface EditValues {
  name: string;
  default_lease_seconds: string;
  add_queues: string;
  /** The granted queues, and which of them the form marks for removal. */
  queues: string[];
  remove_queues: string[];
}

type TextField = 'name' | 'default_lease_seconds' | 'add_queues';

/** Grace periods offered for the replaced credential, in seconds (0: it stops now). */
const GRACES: ReadonlyArray<[number, string]> = [
  [0, 'none: it stops now'],
  [300, '5 minutes'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [MAX_CREDENTIAL_GRACE_SECONDS, '7 days'],
];

function editForm(slug: string, csrf: string, v: EditValues, message?: string): SafeHtml {
  const input = (name: TextField, label: string, hint: string, extra: SafeHtml = html``) =>
    html`<p><label for="edit-${name}">${label}</label> <input id="edit-${name}" name="${name}" value="${v[name]}"${extra}>
<span class="note">${hint}</span></p>`;
  const form = html`<form method="post" action="/endpoints/${slug}/edit">${csrfField(csrf)}
${input('name', 'Display name', 'what the board and the vend answer call it', html` maxlength="80" required`)}
${input('default_lease_seconds', 'Default lease (seconds)', 'empty: the server’s default', html` inputmode="numeric"`)}
${input('add_queues', 'Add queues', 'comma-separated; queues already granted are kept as they are')}
<fieldset><legend>Remove queues</legend>
<p class="note">Refused while a queue has live todos, schedules or webhooks; what it did stays in the history.</p>
${joinHtml(
  v.queues.map(
    (q, i) =>
      html`<label class="inline"><input type="checkbox" id="edit-remove-${i}" name="remove_queues" value="${q}"${v.remove_queues.includes(q) ? ' checked' : ''}> <code>${q}</code></label>`,
  ),
  ' ',
)}</fieldset>
<button type="submit">Save changes</button></form>`;
  return withError(form, message);
}

function rotateForm(slug: string, csrf: string, graceSeconds: number): SafeHtml {
  // The server's grace is always offered, and picked: never "none" by accident.
  const graces: ReadonlyArray<[number, string]> = GRACES.some(([s]) => s === graceSeconds)
    ? GRACES
    : [...GRACES, [graceSeconds, `${graceSeconds} seconds`]];
  const options = joinHtml(
    [...graces]
      .sort((a, b) => a[0] - b[0])
      .map(
        ([s, label]) =>
          html`<option value="${s}"${s === graceSeconds ? ' selected' : ''}>${label}${s === graceSeconds ? ' (the server’s default)' : ''}</option>`,
      ),
  );
  return html`<form method="post" action="/endpoints/${slug}/rotate" hx-confirm="Replace the credential of ${slug}?">${csrfField(csrf)}
<p><label for="rotate-grace">The old credential keeps working for</label> <select id="rotate-grace" name="grace_seconds">${options}</select></p>
<button type="submit">Rotate the credential</button></form>`;
}

function editPage(
  session: BoardSession,
  endpoint: { slug: string; name: string },
  v: EditValues,
  graceSeconds: number,
  message?: string,
): SafeHtml {
  const body = html`<p><a href="/endpoints/${endpoint.slug}">Back to ${endpoint.name}</a></p>
<section aria-labelledby="edit-settings"><h2 id="edit-settings">Settings</h2>${editForm(endpoint.slug, session.csrf, v, message)}</section>
<section aria-labelledby="edit-rotate"><h2 id="edit-rotate">Credential</h2>
<p class="note">A new credential for the same slug: <code>.mcp.json</code>, the channel flag and allowed tools stay valid; only the credential in them changes. It is shown once.</p>
${rotateForm(endpoint.slug, session.csrf, graceSeconds)}</section>`;
  return page(`Edit ${endpoint.name}`, body, chromeOf(session, 'endpoints'));
}

/** The form's fields as the use case takes them; empty ones change nothing (lease: cleared). */
function settingsOf(form: Form | undefined, current: { default_lease_seconds: number | null }) {
  const lease = field(form, 'default_lease_seconds').trim();
  const queues = field(form, 'add_queues')
    .split(',')
    .map((q) => q.trim())
    .filter(Boolean);
  const leaseValue = lease === '' ? null : /^\d+$/.test(lease) ? Number(lease) : lease;
  const removing = fields(form, 'remove_queues');
  return {
    name: field(form, 'name'),
    ...(leaseValue !== current.default_lease_seconds && { default_lease_seconds: leaseValue }),
    ...(queues.length > 0 && { add_queues: queues }),
    ...(removing.length > 0 && { remove_queues: removing }),
  };
}

export function endpointEditPages(app: FastifyInstance, deps: BoardDeps): void {
  /** The owner's live endpoint, or null with the 404 page already sent. */
  async function liveEndpoint(session: BoardSession, ref: string, reply: FastifyReply) {
    try {
      const endpoint = await resolveEndpoint(deps.operator, session.principal.human.id, ref);
      if (!endpoint.revoked_at) return endpoint;
    } catch (err) {
      if (!isAppError(err, 'not_found')) throw err;
    }
    await notFoundPage(reply, session, 'endpoint');
    return null;
  }

  app.get<RefParams>('/endpoints/:ref/edit', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await liveEndpoint(session, request.params.ref, reply);
    if (!endpoint) return reply;
    const values = {
      name: endpoint.name,
      default_lease_seconds: endpoint.default_lease_seconds === null ? '' : String(endpoint.default_lease_seconds),
      add_queues: '',
      queues: endpoint.queues,
      remove_queues: [],
    };
    return sendHtml(reply, 200, editPage(session, endpoint, values, deps.operator.credentialGraceSeconds ?? 3600));
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/edit', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await liveEndpoint(session, request.params.ref, reply);
    if (!endpoint) return reply;
    const input = settingsOf(request.body, endpoint);
    try {
      await updateEndpoint(deps.operator, session.principal.human.id, endpoint.id, input, deps.now());
    } catch (err) {
      if (!isAppError(err, 'invalid_argument') && !isAppError(err, 'failed_precondition')) throw err;
      // "add_queues.1: …" names the one queue of the box that is wrong.
      const message = err.message.replace(
        /^add_queues\.(\d+): /,
        (_, i: string) => `add_queues: "${input.add_queues?.[Number(i)] ?? ''}" `,
      );
      const values = {
        name: field(request.body, 'name'),
        default_lease_seconds: field(request.body, 'default_lease_seconds'),
        add_queues: field(request.body, 'add_queues'),
        queues: endpoint.queues,
        remove_queues: fields(request.body, 'remove_queues'),
      };
      const grace = deps.operator.credentialGraceSeconds ?? 3600;
      return sendHtml(
        reply,
        err.code === 'failed_precondition' ? 409 : 400,
        editPage(session, endpoint, values, grace, message),
      );
    }
    return reply.redirect(`/endpoints/${encodeURIComponent(endpoint.slug)}`, 303);
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/rotate', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await liveEndpoint(session, request.params.ref, reply);
    if (!endpoint) return reply;
    const grace = field(request.body, 'grace_seconds');
    const input = /^\d+$/.test(grace) ? { grace_seconds: Number(grace) } : {};
    let rotated: Awaited<ReturnType<typeof rotateEndpointCredential>>;
    try {
      rotated = await rotateEndpointCredential(
        deps.operator,
        session.principal.human.id,
        endpoint.id,
        input,
        deps.now(),
      );
    } catch (err) {
      if (isAppError(err, 'conflict')) return notFoundPage(reply, session, 'endpoint');
      throw err;
    }
    const until = rotated.previous_valid_until
      ? html`The old one keeps working until ${isoTime(new Date(rotated.previous_valid_until))}.`
      : 'The old one stopped working now.';
    const status = html`<strong>${endpoint.slug}</strong> has a new credential. ${until}`;
    return sendHtml(
      reply,
      200,
      reveal(session, rotated, deps.operator.publicUrl, status, `New credential for ${endpoint.name}`),
    );
  });
}
