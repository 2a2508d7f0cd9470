// A webhook's routing as its owner manages it (docs/design/routing.md): read and replace
// its rules (compiled and type-checked before anything is saved; targets checked against
// the owner's endpoints and their queues), set its trusted actors, and the dry run — what
// the rules (saved, or a draft) would do with a given payload or the webhook's latest
// deliveries, touching nothing.

import { z } from 'zod';
import type { Queryable } from '../db/pool.js';
import { invalidArgument, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { RULE_DEFAULTS, ruleInput, setRulesInput, type Rule } from '../domain/routing.js';
import { parseInput } from '../domain/todo.js';
import { recentWebhookEvents } from '../store/webhook-events.js';
import {
  routeTargets,
  setWebhookRules,
  setWebhookTrust,
  webhookRoutingOf,
  type WebhookOwner,
  type WebhookRouting,
} from '../store/webhooks.js';
import { heldWorkOrder } from '../store/work-orders.js';
import { readingOf } from '../webhooks/ingest.js';
import type { Provider } from '../webhooks/verify.js';
import { compile } from './cel.js';
import { decideEvent, type StoredRouting } from './route.js';
import { compileRouting, DEFAULT_ROUTING_LIMITS, type Decision, type RoutingLimits } from './rules.js';

export interface RoutingDeps {
  db: Queryable;
  /** The settings that bound rules (SWITCHBOARD_RULES_MAX and the rest); absent: the defaults. */
  routing?: RoutingLimits;
}

function limitsOf(deps: RoutingDeps): RoutingLimits {
  return deps.routing ?? DEFAULT_ROUTING_LIMITS;
}

function rulesView(w: WebhookRouting) {
  return { rules: w.rules, default: w.rules_default };
}

function trustView(w: Pick<WebhookRouting, 'trusted_actors' | 'trust_when'>) {
  return { actors: w.trusted_actors, when: w.trust_when, enforced: w.trusted_actors !== null };
}

async function routingOf(deps: RoutingDeps, owner: WebhookOwner, id: string) {
  const w = await webhookRoutingOf(deps.db, owner, id);
  if (!w) throw notFound('webhook', id);
  return w;
}

/** GET /api/v1/webhooks/{id}/rules. */
export async function getRules(deps: RoutingDeps, owner: WebhookOwner, id: string) {
  const w = await routingOf(deps, owner, id);
  return { ...rulesView(w), trusted_actors: trustView(w) };
}

/**
 * Every route's targets are the webhook owner's live endpoints, each granting the queue
 * the route puts work on (the rule's, else the webhook's). Checked when saved so a typo
 * is a 400 naming the field; checked again at delivery (an endpoint may be revoked since).
 */
async function checkTargets(
  db: Queryable,
  webhook: { human_id: string; queue: string; endpoint_queues: string[] },
  rules: z.infer<typeof ruleInput>[],
): Promise<void> {
  const slugs = [...new Set(rules.flatMap((r) => (r.then.action === 'route' ? (r.then.endpoints ?? []) : [])))];
  const found = slugs.length === 0 ? [] : await routeTargets(db, webhook.human_id, slugs);
  const bySlug = new Map(found.map((e) => [e.slug, e]));
  for (const [i, r] of rules.entries()) {
    if (r.then.action !== 'route') continue;
    const queue = r.then.queue ?? webhook.queue;
    if (r.then.endpoints === undefined && !webhook.endpoint_queues.includes(queue)) {
      throw invalidArgument(
        `rules[${i}].then.queue`,
        `"${queue}" is not one of this endpoint's queues (${webhook.endpoint_queues.join(', ')})`,
      );
    }
    for (const [j, slug] of (r.then.endpoints ?? []).entries()) {
      const e = bySlug.get(slug);
      if (!e) throw invalidArgument(`rules[${i}].then.endpoints[${j}]`, `"${slug}" is not one of your live endpoints`);
      if (!e.queues.includes(queue)) {
        throw invalidArgument(
          `rules[${i}].then.queue`,
          `"${queue}" is not one of ${slug}'s queues (${e.queues.join(', ')})`,
        );
      }
    }
  }
}

/** The rules as they will be stored: each keeps the id it was sent with, or gets one. */
function withIds(rules: z.infer<typeof ruleInput>[]): Rule[] {
  const seen = new Set<string>();
  return rules.map((r, i) => {
    if (r.id !== undefined && seen.has(r.id)) throw invalidArgument(`rules[${i}].id`, `repeats ${r.id}`);
    const id = r.id ?? newId('rl');
    seen.add(id);
    return { id, name: r.name, when: r.when, then: r.then };
  });
}

/** PUT /api/v1/webhooks/{id}/rules: replaces the rules whole, or answers 400 naming `rules[i].field` and the position. */
export async function setRules(deps: RoutingDeps, owner: WebhookOwner, id: string, input: unknown) {
  const data = parseInput(setRulesInput, input);
  const w = await routingOf(deps, owner, id);
  const rules = withIds(data.rules);
  const rulesDefault = data.default ?? 'route';
  compileRouting(
    { rules, default: rulesDefault, trustedActors: w.trusted_actors, trustWhen: w.trust_when },
    limitsOf(deps),
  );
  await checkTargets(deps.db, w, data.rules);
  if (!(await setWebhookRules(deps.db, owner, { id, rules, default: rulesDefault }))) throw notFound('webhook', id);
  return { rules, default: rulesDefault };
}

const actor = z.string().trim().min(1).check(maxLength(200));
export const setTrustInput = z.strictObject({
  actors: z
    .array(actor)
    .max(1000)
    .describe(
      "Provider logins or ids whose events route; anyone else's are quarantined. Setting a list (even empty) turns the gate on.",
    ),
  when: z
    .string()
    .min(1)
    .nullable()
    .optional()
    .describe(
      'A CEL expression that also trusts an actor, e.g. payload.comment.author_association in ["OWNER", "MEMBER"].',
    ),
});

/** PUT /api/v1/webhooks/{id}/trusted-actors: turns the trust gate on with this list (and expression). */
export async function setTrust(deps: RoutingDeps, owner: WebhookOwner, id: string, input: unknown) {
  const data = parseInput(setTrustInput, input);
  const when = data.when ?? null;
  if (when !== null) compile(when, 'when', { expressionMax: limitsOf(deps).expressionMax }, ['bool']);
  const actors = [...new Set(data.actors)];
  if (!(await setWebhookTrust(deps.db, owner, { id, actors, when }))) throw notFound('webhook', id);
  return { trusted_actors: trustView({ trusted_actors: actors, trust_when: when }) };
}

/** DELETE /api/v1/webhooks/{id}/trusted-actors: no gate; every actor's events route. */
export async function clearTrust(deps: RoutingDeps, owner: WebhookOwner, id: string) {
  if (!(await setWebhookTrust(deps.db, owner, { id, actors: null, when: null }))) throw notFound('webhook', id);
  return { trusted_actors: trustView({ trusted_actors: null, trust_when: null }) };
}

/** The most deliveries one dry run replays. */
export const DRY_RUN_MAX = 50;

const headerMap = z.record(z.string().max(200), z.string().max(4096));
export const testRulesInput = z.strictObject({
  payload: z.unknown().optional().describe('A delivery body to route (as the provider would send it).'),
  event: z
    .strictObject({
      type: z.string().max(200).optional(),
      actor: z.string().max(200).optional(),
      headers: headerMap.optional(),
    })
    .optional()
    .describe("The event's type, actor and headers; absent ones are read from the payload as the provider's are."),
  last: z
    .number()
    .int()
    .min(1)
    .max(DRY_RUN_MAX)
    .optional()
    .describe(`Replay the webhook's latest deliveries (1–${DRY_RUN_MAX}).`),
  rules: z.array(ruleInput).max(1000).optional().describe('A draft to test instead of the saved rules.'),
  default: z.enum(RULE_DEFAULTS).optional().describe("The draft's action when no rule matches: route or drop."),
});

interface DryRunResult {
  event_id: string | null;
  rule_id: string;
  rule_name: string;
  action: string;
  reason?: string;
  once?: string;
  todos: { endpoint: string | null; queue: string; title: string; kind: string | null; priority?: number }[];
  trace: unknown[];
}

async function predict(
  db: Queryable,
  w: { id: string; endpoint_id: string; human_id: string },
  d: Decision,
  eventId: string | null,
): Promise<DryRunResult> {
  const head = { event_id: eventId, rule_id: d.rule.id, rule_name: d.rule.name, trace: d.trace };
  if (d.disposition === 'dropped') return { ...head, action: 'dropped', reason: d.reason, todos: [] };
  if (d.disposition === 'faulted') return { ...head, action: 'faulted', reason: `${d.field}: ${d.error}`, todos: [] };
  const todos = d.targets.map((t) => ({
    endpoint: t.endpoint,
    queue: t.queue,
    title: t.title,
    kind: t.kind,
    ...(t.priority === undefined ? {} : { priority: t.priority }),
  }));
  const once = d.once === null ? {} : { once: d.once };
  if (d.disposition === 'quarantined') return { ...head, action: 'quarantined', reason: d.reason, ...once, todos };
  const slugs = [...new Set(d.targets.flatMap((t) => (t.endpoint === null ? [] : [t.endpoint])))];
  const found = new Set((await routeTargets(db, w.human_id, slugs)).map((e) => e.slug));
  const gone = slugs.find((s) => !found.has(s));
  if (gone !== undefined) {
    return {
      ...head,
      action: 'faulted',
      reason: `endpoints: "${gone}" is not a live endpoint of the owner`,
      todos: [],
    };
  }
  if (d.once !== null) {
    const holder = await heldWorkOrder(db, { endpointId: w.endpoint_id, webhookId: w.id, key: d.once });
    // The event that holds the key is the one it made work for: what it did, it would do again.
    if (holder !== null && holder !== eventId) {
      return {
        ...head,
        action: 'duplicate',
        reason: `work order "${d.once}" is held by event ${holder}`,
        ...once,
        todos: [],
      };
    }
  }
  return { ...head, action: 'routed', ...once, todos };
}

/**
 * POST /api/v1/webhooks/{id}/rules/test: what the rules (saved, or the draft sent) would
 * do with a payload, or with the webhook's latest deliveries (`last`, default 50 when no
 * payload is sent). Nothing is written; the work-order check reads the live keys.
 */
export async function testRules(deps: RoutingDeps, owner: WebhookOwner, id: string, input: unknown) {
  const data = parseInput(testRulesInput, input ?? {});
  const w = await routingOf(deps, owner, id);
  let routing: StoredRouting = w;
  if (data.rules !== undefined) {
    const rules = withIds(data.rules);
    const rulesDefault = data.default ?? 'route';
    compileRouting(
      { rules, default: rulesDefault, trustedActors: w.trusted_actors, trustWhen: w.trust_when },
      limitsOf(deps),
    );
    routing = { ...w, rules, rules_default: rulesDefault };
  } else if (data.default !== undefined) {
    routing = { ...w, rules_default: data.default };
  }
  const provider = w.provider as Provider;
  const route = (headers: Record<string, string>, payload: unknown, over?: { type?: string; actor?: string }) => {
    const reading = readingOf(provider, (name) => headers[name.toLowerCase()], payload);
    const r = {
      kind: over?.type ?? reading.kind,
      actor: over?.actor ?? reading.actor,
      title: reading.title,
    };
    return decideEvent(
      routing,
      { provider, queue: w.queue, reading: r, headers, payload: reading.payload, priority: undefined },
      limitsOf(deps),
    );
  };
  const results: DryRunResult[] = [];
  if (data.payload !== undefined) {
    const headers = Object.fromEntries(Object.entries(data.event?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    results.push(await predict(deps.db, w, route(headers, data.payload, data.event), null));
  } else {
    if (data.event !== undefined) throw invalidArgument('payload', 'is required with event');
    const events = await recentWebhookEvents(deps.db, {
      endpointId: w.endpoint_id,
      webhookId: w.id,
      limit: data.last ?? DRY_RUN_MAX,
    });
    for (const e of events) results.push(await predict(deps.db, w, route(e.headers, e.payload), e.id));
  }
  return { results };
}
