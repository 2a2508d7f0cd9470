// /api/v1 routes for routing rules, trusted actors and the quarantine
// (docs/design/routing.md): read and replace a webhook's rules, dry-run them, set or clear
// its trusted actors; list, show, release and discard quarantined events.

import type { FastifyInstance } from 'fastify';
import {
  quarantineDiscardOut,
  quarantineListOut,
  quarantineReleaseOut,
  quarantineShowOut,
  rulesOut,
  rulesShowOut,
  rulesTestOut,
  trustSetOut,
} from '../contract/routing.js';
import { setRulesInput } from '../domain/routing.js';
import type { Auth } from '../http/auth.js';
import { route } from '../http/contract.js';
import {
  clearTrust,
  getRules,
  setRules,
  setTrust,
  setTrustInput,
  testRules,
  testRulesInput,
  type RoutingDeps,
} from '../routing/manage.js';
import {
  discardInput,
  discardQuarantine,
  listQuarantine,
  listQuarantineInput,
  releaseQuarantine,
  showQuarantine,
} from '../routing/quarantine.js';
import type { RecordDeps } from '../webhooks/record.js';
import { idParams } from './contract-common.js';

/** Query strings arrive as text; the limit is turned into a number for validation. */
function listQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function ruleRoutes(app: FastifyInstance, deps: RoutingDeps & RecordDeps, auth: Auth): void {
  const human = async (request: Parameters<Auth['authenticate']>[0], reply: Parameters<Auth['authenticate']>[1]) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return { humanId: principal.human.id };
  };
  const rules = { tag: 'routing', access: 'human', params: idParams } as const;
  const quarantine = { tag: 'quarantine', access: 'human' } as const;
  route(
    app,
    {
      ...rules,
      method: 'GET',
      url: '/api/v1/webhooks/:id/rules',
      summary: "A webhook's routing rules, default action and trusted actors.",
      answers: { 200: rulesShowOut },
    },
    async (request, reply) => getRules(deps, await human(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...rules,
      method: 'PUT',
      url: '/api/v1/webhooks/:id/rules',
      summary: 'Replace the rules whole; a compile error names rules[i].field and the position.',
      body: setRulesInput,
      answers: { 200: rulesOut },
    },
    async (request, reply) => setRules(deps, await human(request, reply), request.params.id, request.body),
  );
  route(
    app,
    {
      ...rules,
      method: 'POST',
      url: '/api/v1/webhooks/:id/rules/test',
      summary: 'Dry run: what the rules would do with a payload or the last deliveries.',
      body: testRulesInput,
      answers: { 200: rulesTestOut },
    },
    async (request, reply) => testRules(deps, await human(request, reply), request.params.id, request.body),
  );
  route(
    app,
    {
      ...rules,
      method: 'PUT',
      url: '/api/v1/webhooks/:id/trusted-actors',
      summary: "Turn the trust gate on: other actors' routed events are quarantined.",
      body: setTrustInput,
      answers: { 200: trustSetOut },
    },
    async (request, reply) => setTrust(deps, await human(request, reply), request.params.id, request.body),
  );
  route(
    app,
    {
      ...rules,
      method: 'DELETE',
      url: '/api/v1/webhooks/:id/trusted-actors',
      summary: "Turn the trust gate off: every actor's events route.",
      answers: { 200: trustSetOut },
    },
    async (request, reply) => clearTrust(deps, await human(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...quarantine,
      method: 'GET',
      url: '/api/v1/quarantine',
      summary: 'Held events of untrusted actors, newest first.',
      query: listQuarantineInput,
      answers: { 200: quarantineListOut },
    },
    async (request, reply) => listQuarantine(deps, await human(request, reply), listQuery(request.query)),
  );
  route(
    app,
    {
      ...quarantine,
      method: 'GET',
      url: '/api/v1/quarantine/:id',
      summary: 'One held event, with the payload that would reach an agent.',
      params: idParams,
      answers: { 200: quarantineShowOut },
    },
    async (request, reply) => showQuarantine(deps, await human(request, reply), request.params.id),
  );
  route(
    app,
    {
      ...quarantine,
      method: 'POST',
      url: '/api/v1/quarantine/:id/release',
      summary: 'Route a held event as if trusted; its todos are made and rung.',
      params: idParams,
      answers: { 200: quarantineReleaseOut },
    },
    async (request, reply) => {
      const owner = await human(request, reply);
      return releaseQuarantine(deps, owner, request.params.id, owner);
    },
  );
  route(
    app,
    {
      ...quarantine,
      method: 'POST',
      url: '/api/v1/quarantine/:id/discard',
      summary: 'Discard a held event with a reason; nothing is made.',
      params: idParams,
      body: discardInput,
      answers: { 200: quarantineDiscardOut },
    },
    async (request, reply) => {
      const owner = await human(request, reply);
      return discardQuarantine(deps, owner, request.params.id, owner, request.body);
    },
  );
}
