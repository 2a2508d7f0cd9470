// The webhooks page of an endpoint (docs/design/intake.md, "Webhooks with a provider"):
// its webhooks with New URL / New secret / Set secret / Delete, and the add form. Plain
// forms with the CSRF field, so it works without JavaScript. Add, New URL and New secret
// answer the page itself with what they made (a URL and a generated secret are shown that
// once, never stored in clear to be shown again); Delete answers 303 back. A mistake
// re-renders the page with the field named. Another human's endpoint answers 404, and a
// webhook id is looked up within this endpoint only.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { invalidArgument, isAppError, type ErrorCode } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import {
  createWebhook,
  deleteWebhook,
  listWebhooksOf,
  rotateWebhook,
  setWebhookSecret,
  type WebhookDeps,
} from '../webhooks/manage.js';
import type { RecordDeps } from '../webhooks/record.js';
import { formError } from './field-errors.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { html, page } from './html.js';
import {
  CREATE_FIELDS,
  createForm,
  revealSection,
  webhookTable,
  type CreateValues,
  type Reveal,
} from './webhook-html.js';
import type { BoardDeps } from './guard.js';

/** The use-case deps of webhooks and replay: the operator's, with the keyring and the secret grace. */
export type IntakeDeps = WebhookDeps & RecordDeps;
type Deps = BoardDeps & { intake: IntakeDeps };

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { ref: string; id: string } };

interface Target {
  id: string;
  slug: string;
  name: string;
  queues: string[];
}

interface Shown {
  status?: number;
  reveal?: Reveal;
  create?: { values: CreateValues; error: string };
  /** An error of one webhook's own form (its set-secret field), or of its row's action. */
  rowError?: { id: string; message: string };
}

async function target(deps: Deps, session: BoardSession, ref: string): Promise<Target | null> {
  try {
    return await resolveEndpoint(deps.operator, session.principal.human.id, ref);
  } catch (err) {
    if (isAppError(err, 'not_found')) return null;
    throw err;
  }
}

async function render(deps: Deps, session: BoardSession, reply: FastifyReply, endpoint: Target, shown: Shown = {}) {
  const slug = endpoint.slug;
  const base = `/endpoints/${slug}/webhooks`;
  const webhooks = await listWebhooksOf(deps.operator, endpoint.id);
  const values = shown.create?.values ?? { provider: 'token', queue: endpoint.queues[0] ?? '' };
  const body = html`<p><a href="/endpoints/${slug}">${endpoint.name}</a> · <a href="/endpoints/${slug}/events">Received</a> · <a href="/quarantine">Quarantine</a></p>
${shown.reveal ? revealSection(shown.reveal) : ''}
<section aria-labelledby="w-list"><h2 id="w-list">Current webhooks</h2>${webhookTable(webhooks, base, session.csrf, shown.rowError)}</section>
<section aria-labelledby="w-add"><h2 id="w-add">Add a webhook</h2>${formError(shown.create?.error, CREATE_FIELDS)}${createForm(endpoint.queues, base, session.csrf, values, shown.create?.error)}</section>`;
  // A boosted form's answer is this page: its address, not the action's, goes in the history.
  void reply.header('HX-Replace-Url', `/endpoints/${endpoint.slug}/webhooks`);
  return sendHtml(
    reply,
    shown.status ?? 200,
    page(`Webhooks of ${endpoint.name}`, body, chromeOf(session, 'endpoints')),
  );
}

/** The add form's fields → the API's webhook input: empty optional fields are left out. */
function createInput(v: CreateValues): Record<string, unknown> {
  return {
    queue: v.queue,
    provider: v.provider,
    ...(v.name?.trim() ? { name: v.name.trim() } : {}),
    ...(v.secret ? { secret: v.secret } : {}),
  };
}

/** What a create refuses with the form again: a bad field, or the webhook quota (docs/design/intake.md). */
const REFUSALS: ErrorCode[] = ['invalid_argument', 'resource_exhausted', 'failed_precondition'];

type Act = (deps: Deps, endpoint: Target, id: string, form: Form | undefined) => Promise<Reveal | null>;

/** Each row action: what it does, and what its answer shows (null: 303 back to the page). */
const ACTIONS: Array<[string, Act]> = [
  [
    'rotate',
    async (deps, endpoint, id) => {
      const { webhook, url } = await rotateWebhook(deps.intake, { endpointId: endpoint.id }, id);
      return { what: `The webhook ${webhook.name} has a new URL; the old one no longer works.`, url };
    },
  ],
  [
    'new-secret',
    async (deps, endpoint, id) => {
      const made = await setWebhookSecret(deps.intake, { endpointId: endpoint.id }, id, {});
      return {
        what: `The webhook ${made.webhook.name} has a new signing secret.`,
        ...(made.secret ? { secret: made.secret } : {}),
        previousUntil: made.previous_valid_until,
      };
    },
  ],
  [
    'secret',
    async (deps, endpoint, id, form) => {
      const secret = field(form, 'secret');
      if (!secret) throw invalidArgument('secret', 'enter the secret the provider issued');
      const made = await setWebhookSecret(deps.intake, { endpointId: endpoint.id }, id, { secret });
      const what = `The webhook ${made.webhook.name} now verifies with the secret you set.`;
      return { what, previousUntil: made.previous_valid_until };
    },
  ],
  [
    'delete',
    async (deps, endpoint, id) => {
      await deleteWebhook(deps.intake, { endpointId: endpoint.id }, id);
      return null;
    },
  ],
];

export function webhookPages(app: FastifyInstance, deps: Deps): void {
  app.get<RefParams>('/endpoints/:ref/webhooks', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    return render(deps, session, reply, endpoint);
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/webhooks', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    const values = Object.fromEntries(CREATE_FIELDS.map((k) => [k, field(request.body, k)])) as CreateValues;
    try {
      const made = await createWebhook(deps.intake, session.principal.human.id, endpoint.id, createInput(values));
      const what = `The webhook ${made.webhook.name} (${made.webhook.provider}) takes deliveries for ${made.webhook.queue}.`;
      const reveal = { what, url: made.url, ...(made.secret ? { secret: made.secret } : {}) };
      return await render(deps, session, reply, endpoint, { status: 201, reveal });
    } catch (err) {
      if (!REFUSALS.some((code) => isAppError(err, code))) throw err;
      return render(deps, session, reply, endpoint, { status: 400, create: { values, error: (err as Error).message } });
    }
  });

  for (const [name, act] of ACTIONS) {
    app.post<IdParams & { Body: Form }>(`/endpoints/:ref/webhooks/:id/${name}`, async (request, reply) => {
      const session = await signedInForm(deps.identity, request, reply);
      if (!session) return reply;
      const endpoint = await target(deps, session, request.params.ref);
      if (!endpoint) return notFoundPage(reply, session, 'endpoint');
      const { id } = request.params;
      try {
        const reveal = await act(deps, endpoint, id, request.body);
        if (!reveal) return await reply.redirect(`/endpoints/${endpoint.slug}/webhooks`, 303);
        return await render(deps, session, reply, endpoint, { reveal });
      } catch (err) {
        if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
        if (!isAppError(err, 'invalid_argument')) throw err;
        return render(deps, session, reply, endpoint, { status: 400, rowError: { id, message: err.message } });
      }
    });
  }
}
