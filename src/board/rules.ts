// A webhook's rules page (docs/design/routing.md, docs/board.md "Quarantine and rules"):
// /endpoints/{ref}/webhooks/{id}/rules shows the saved rules, a JSON editor that saves them
// (a refusal names the field and position next to the box, keeping what was typed), a dry
// run of what is in the box, and the trusted-actors form (the trust gate: actors and an
// optional CEL `when`, set or cleared with a CSRF form answered 303 back to the page; a
// refusal is shown next to the field it names). Everything goes through the same use
// cases as the API, with the endpoint named in the path as owner, so another human's
// endpoint or webhook answers 404.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { clearTrust, getRules, setRules, setTrust, testRules } from '../routing/manage.js';
import { chromeOf, field, notFoundPage, sendHtml, signedIn, signedInForm, type Form } from './guard.js';
import type { BoardDeps } from './guard.js';
import { html, page } from './html.js';
import { dryRunTable, rulesEditor, rulesTable, type RulesForm } from './quarantine-html.js';
import { trustSection, type TrustForm } from './rules-html.js';
import type { IntakeDeps } from './webhooks.js';

type Deps = BoardDeps & { intake: IntakeDeps };
type HookParams = { Params: { ref: string; id: string } };
/** A rules page's webhook: its id, the page's path, and the owner that scopes it to the endpoint. */
type Hook = { id: string; base: string; owner: { endpointId: string } };
type SafeResults = Awaited<ReturnType<typeof testRules>>['results'];

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

export function rulesPages(app: FastifyInstance, deps: Deps): void {
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
    trustForm?: Partial<TrustForm>,
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
    const gate = saved.trusted_actors;
    const t: TrustForm = { actors: (gate.actors ?? []).join('\n'), when: gate.when ?? '', ...trustForm };
    const body = html`<p><a href="/quarantine">Quarantine</a> · <a href="/endpoints">Endpoints</a></p>
<p class="note">Rules run in order; the first whose <code>when</code> (a CEL expression over <code>event</code> and <code>payload</code>) is true decides. See docs/design/routing.md.</p>
<section aria-labelledby="r-saved"><h2 id="r-saved">Saved rules</h2>${rulesTable(saved.rules, saved.default)}</section>
<section aria-labelledby="r-edit"><h2 id="r-edit">Edit and test</h2>${rulesEditor(base, session.csrf, f)}</section>
${results ? html`<section aria-labelledby="r-results"><h2 id="r-results">Dry run</h2>${dryRunTable(results)}</section>` : ''}
<section aria-labelledby="r-trust"><h2 id="r-trust">Trusted actors</h2>${trustSection(base, session.csrf, gate, t)}</section>`;
    void reply.header('HX-Replace-Url', base);
    return sendHtml(reply, status, page(`Rules of webhook ${hook.id}`, body, chromeOf(session, 'endpoints')));
  }

  /** A form's sender and the webhook its path names; null once a sign-in or a 404 was answered. */
  async function formHook(
    request: FastifyRequest<HookParams & { Body: Form }>,
    reply: FastifyReply,
  ): Promise<{ session: BoardSession; hook: Hook } | null> {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return null;
    const hook = await hookOf(session, request.params);
    if (hook) return { session, hook };
    await notFoundPage(reply, session, 'endpoint');
    return null;
  }

  app.get<HookParams & { Querystring: { trust?: string } }>(
    '/endpoints/:ref/webhooks/:id/rules',
    async (request, reply) => {
      const session = await signedIn(deps.identity, request, reply);
      if (!session) return reply;
      const hook = await hookOf(session, request.params);
      if (!hook) return notFoundPage(reply, session, 'endpoint');
      const done = (['set', 'cleared'] as const).find((d) => d === request.query.trust);
      return render(session, reply, hook, 200, undefined, undefined, done ? { done } : undefined);
    },
  );

  /** The trust gate on, with the actors typed (commas or new lines between them) and the optional `when`. */
  app.post<HookParams & { Body: Form }>('/endpoints/:ref/webhooks/:id/rules/trust', async (request, reply) => {
    const found = await formHook(request, reply);
    if (!found) return reply;
    const { session, hook } = found;
    const typed = { actors: field(request.body, 'actors'), when: field(request.body, 'when') };
    const actors = typed.actors
      .split(/[,\r\n]+/)
      .map((a) => a.trim())
      .filter((a) => a !== '');
    const when = typed.when.trim();
    try {
      await setTrust(routingDeps(), hook.owner, hook.id, { actors, when: when === '' ? null : when });
      return await reply.redirect(`${hook.base}?trust=set`, 303);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
      if (isAppError(err, 'invalid_argument'))
        return render(session, reply, hook, 400, undefined, undefined, { ...typed, error: err.message });
      throw err;
    }
  });

  app.post<HookParams & { Body: Form }>('/endpoints/:ref/webhooks/:id/rules/trust/clear', async (request, reply) => {
    const found = await formHook(request, reply);
    if (!found) return reply;
    const { session, hook } = found;
    try {
      await clearTrust(routingDeps(), hook.owner, hook.id);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'webhook');
      throw err;
    }
    return reply.redirect(`${hook.base}?trust=cleared`, 303);
  });

  app.post<HookParams & { Body: Form }>('/endpoints/:ref/webhooks/:id/rules', async (request, reply) => {
    const found = await formHook(request, reply);
    if (!found) return reply;
    const { session, hook } = found;
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
    const found = await formHook(request, reply);
    if (!found) return reply;
    const { session, hook } = found;
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
