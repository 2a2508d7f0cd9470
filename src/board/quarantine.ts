// The board's quarantine and a webhook's rules page (docs/design/routing.md, docs/board.md
// "Quarantine and rules"). /quarantine lists the signed-in human's held items (or another
// state's); /quarantine/{id} shows one with its payload and the Release and Discard forms
// (CSRF forms answered 303 back to the list with a notice; an item already resolved is a
// 409 saying so). /endpoints/{ref}/webhooks/{id}/rules shows the saved rules, a JSON editor that saves
// them (a refusal names the field and position next to the box, keeping what was typed)
// and a dry run of what is in the box. Everything goes through the same use cases as the
// API, with the human as owner (a rules page: the endpoint named in its path), so another
// human's item, endpoint or webhook answers 404.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { QUARANTINE_STATES } from '../domain/routing.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { getRules, setRules, testRules } from '../routing/manage.js';
import { discardQuarantine, listQuarantine, releaseQuarantine, showQuarantine } from '../routing/quarantine.js';
import { chromeOf, field, notFoundPage, sendHtml, signedIn, signedInForm, type Form } from './guard.js';
import type { BoardDeps } from './guard.js';
import { errorLine, html, page } from './html.js';
import {
  dryRunTable,
  itemDetail,
  quarantineTable,
  resolvedNotice,
  rulesEditor,
  rulesTable,
  stateLinks,
  type RulesForm,
} from './quarantine-html.js';
import type { IntakeDeps } from './webhooks.js';

type Deps = BoardDeps & { intake: IntakeDeps };
type IdParams = { Params: { id: string } };
type HookParams = { Params: { ref: string; id: string } };
/** A rules page's webhook: its id, the page's path, and the owner that scopes it to the endpoint. */
type Hook = { id: string; base: string; owner: { endpointId: string } };

const ownerOf = (session: BoardSession) => ({ humanId: session.principal.human.id });

async function showItem(
  deps: Deps,
  session: BoardSession,
  reply: FastifyReply,
  id: string,
  status = 200,
  discard: { reason: string; error?: string } = { reason: '' },
) {
  try {
    const { item } = await showQuarantine(deps.intake, ownerOf(session), id);
    const body = itemDetail(item, session.csrf, discard);
    return await sendHtml(reply, status, page(`Quarantined ${item.id}`, body, chromeOf(session, 'endpoints')));
  } catch (err) {
    if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
    throw err;
  }
}

/** An item already released or discarded (or whose event is gone): a 409 that says so. */
function conflictPage(reply: FastifyReply, session: BoardSession, id: string, message: string) {
  const body = html`${errorLine(`Not done: ${message}. Someone (or an agent) resolved it first; nothing more was made.`)}
<p><a href="/quarantine/${id}">See the item</a> · <a href="/quarantine">Back to the quarantine</a></p>`;
  return sendHtml(reply, 409, page('Already resolved', body, chromeOf(session, 'endpoints')));
}

function quarantinePages(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { state?: string; done?: string; item?: string } }>('/quarantine', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const q = request.query;
    const state = (QUARANTINE_STATES as readonly string[]).includes(q.state ?? '') ? (q.state as string) : 'held';
    const { items } = await listQuarantine(deps.intake, ownerOf(session), { state });
    let notice = html``;
    if ((q.done === 'released' || q.done === 'discarded') && q.item) {
      const done = q.done;
      const shown = await showQuarantine(deps.intake, ownerOf(session), q.item).catch((err: unknown) => {
        if (isAppError(err, 'not_found')) return null;
        throw err;
      });
      notice = resolvedNotice(done, shown?.item ?? null);
    }
    const body = html`${notice}<p class="note">Events a webhook's rules would have routed, from actors it does not trust: nothing reaches an agent until you release one. Trusted actors are set per webhook (<code>switchboard webhook trust</code>); rules are on each webhook's Rules page.</p>
${stateLinks(state)}${quarantineTable(items, state)}`;
    return sendHtml(reply, 200, page('Quarantine', body, chromeOf(session, 'endpoints')));
  });

  app.get<IdParams>('/quarantine/:id', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    return showItem(deps, session, reply, request.params.id);
  });

  app.post<IdParams & { Body: Form }>('/quarantine/:id/release', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { id } = request.params;
    try {
      await releaseQuarantine(deps.intake, ownerOf(session), id, ownerOf(session));
      return await reply.redirect(`/quarantine?done=released&item=${encodeURIComponent(id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
      if (isAppError(err, 'conflict') || isAppError(err, 'failed_precondition'))
        return conflictPage(reply, session, id, err.message);
      throw err;
    }
  });

  app.post<IdParams & { Body: Form }>('/quarantine/:id/discard', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const { id } = request.params;
    const reason = field(request.body, 'reason');
    try {
      await discardQuarantine(deps.intake, ownerOf(session), id, ownerOf(session), { reason });
      return await reply.redirect(`/quarantine?done=discarded&item=${encodeURIComponent(id)}`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'quarantine item');
      if (isAppError(err, 'conflict')) return conflictPage(reply, session, id, err.message);
      if (isAppError(err, 'invalid_argument'))
        return showItem(deps, session, reply, id, 400, { reason, error: err.message });
      throw err;
    }
  });
}

/** The box's text as `{rules, default}`; a mistake reads "rules: …" so it lands next to the box. */
function draftOf(text: string): { rules?: unknown; default?: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new DraftError(`rules: not JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new DraftError('rules: the box holds an object {"rules": [...], "default": "route"}');
  return parsed;
}

class DraftError extends Error {}

function rulesPages(app: FastifyInstance, deps: Deps): void {
  const routingDeps = () => deps.intake;

  /** The endpoint in the path, resolved for the signed-in human; null when not theirs. */
  async function hookOf(session: BoardSession, params: HookParams['Params']): Promise<Hook | null> {
    try {
      const endpoint = await resolveEndpoint(deps.operator, session.principal.human.id, params.ref);
      return {
        id: params.id,
        base: `/endpoints/${endpoint.slug}/webhooks/${params.id}/rules`,
        owner: { endpointId: endpoint.id },
      };
    } catch (err) {
      if (isAppError(err, 'not_found')) return null;
      throw err;
    }
  }

  async function render(
    session: BoardSession,
    reply: FastifyReply,
    hook: Hook,
    status: number,
    form?: Partial<RulesForm>,
    results?: SafeResults,
  ) {
    let saved;
    try {
      saved = await getRules(routingDeps(), hook.owner, hook.id);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
      throw err;
    }
    const base = hook.base;
    const f: RulesForm = {
      rules: JSON.stringify({ rules: saved.rules, default: saved.default }, null, 2),
      payload: '',
      type: '',
      ...form,
    };
    const trust = saved.trusted_actors.enforced
      ? html`<p class="note">Trust gate on: events routed for actors other than ${saved.trusted_actors.actors?.length ? saved.trusted_actors.actors.join(', ') : 'none'} are quarantined (<a href="/quarantine">Quarantine</a>).</p>`
      : html`<p class="note">No trust gate: every actor's events route.</p>`;
    const body = html`<p><a href="/quarantine">Quarantine</a> · <a href="/endpoints">Endpoints</a></p>
<p class="note">Rules run in order; the first whose <code>when</code> (a CEL expression over <code>event</code> and <code>payload</code>) is true decides. See docs/design/routing.md.</p>${trust}
<section aria-labelledby="r-saved"><h2 id="r-saved">Saved rules</h2>${rulesTable(saved.rules, saved.default)}</section>
<section aria-labelledby="r-edit"><h2 id="r-edit">Edit and test</h2>${rulesEditor(base, session.csrf, f)}</section>
${results ? html`<section aria-labelledby="r-results"><h2 id="r-results">Dry run</h2>${dryRunTable(results)}</section>` : ''}`;
    void reply.header('HX-Replace-Url', base);
    return sendHtml(reply, status, page(`Rules of webhook ${hook.id}`, body, chromeOf(session, 'endpoints')));
  }

  app.get<HookParams>('/endpoints/:ref/webhooks/:id/rules', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const hook = await hookOf(session, request.params);
    if (!hook) return notFoundPage(reply, session, 'endpoint');
    return render(session, reply, hook, 200);
  });

  app.post<HookParams & { Body: Form }>('/endpoints/:ref/webhooks/:id/rules', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const hook = await hookOf(session, request.params);
    if (!hook) return notFoundPage(reply, session, 'endpoint');
    const typed = {
      rules: field(request.body, 'rules'),
      payload: field(request.body, 'payload'),
      type: field(request.body, 'type'),
    };
    try {
      await setRules(routingDeps(), hook.owner, hook.id, draftOf(typed.rules));
      // The box shows the rules as saved now (each with its id); the dry-run fields are kept.
      return await render(session, reply, hook, 200, { payload: typed.payload, type: typed.type, saved: true });
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
      if (err instanceof DraftError || isAppError(err, 'invalid_argument'))
        return render(session, reply, hook, 400, { ...typed, saveError: err.message });
      throw err;
    }
  });

  app.post<HookParams & { Body: Form }>('/endpoints/:ref/webhooks/:id/rules/test', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const hook = await hookOf(session, request.params);
    if (!hook) return notFoundPage(reply, session, 'endpoint');
    const typed = {
      rules: field(request.body, 'rules'),
      payload: field(request.body, 'payload'),
      type: field(request.body, 'type'),
    };
    const last = field(request.body, 'last');
    try {
      const input: Record<string, unknown> = {};
      if (typed.rules.trim()) {
        const draft = draftOf(typed.rules);
        if (draft.rules !== undefined) input.rules = draft.rules;
        if (draft.default !== undefined) input.default = draft.default;
      }
      if (last) {
        input.last = 50;
      } else {
        try {
          input.payload = JSON.parse(typed.payload || 'null');
        } catch (e) {
          return await render(session, reply, hook, 400, {
            ...typed,
            testError: `payload: not JSON (${(e as Error).message})`,
          });
        }
        if (input.payload === null)
          return await render(session, reply, hook, 400, {
            ...typed,
            testError: 'payload: paste a payload, or run on the last 50 deliveries',
          });
        if (typed.type.trim()) input.event = { type: typed.type.trim() };
      }
      const { results } = await testRules(routingDeps(), hook.owner, hook.id, input);
      return await render(session, reply, hook, 200, typed, results);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
      if (err instanceof DraftError || (isAppError(err, 'invalid_argument') && err.message.startsWith('rules')))
        return render(session, reply, hook, 400, { ...typed, saveError: err.message });
      if (isAppError(err, 'invalid_argument'))
        return render(session, reply, hook, 400, { ...typed, testError: err.message });
      throw err;
    }
  });
}

type SafeResults = Awaited<ReturnType<typeof testRules>>['results'];

export function routingPages(app: FastifyInstance, deps: Deps): void {
  quarantinePages(app, deps);
  rulesPages(app, deps);
}
