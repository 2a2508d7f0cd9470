// /api/v1/admission (docs/design/admission.md, "Wire shapes"): a human's budgets. {scope}
// is `endpoint:<slug-or-id>` (team scopes come with team queues); a scope that is
// unknown, malformed or another human's answers 404 not_found, the same on every route.
// PUT is a full replace, validated field by field before anything is written.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { budgetClearedOut, budgetDetailOut, budgetListOut, budgetSetOut, policyShape } from '../contract/budgets.js';
import { route } from '../http/contract.js';
import { clearPolicy, humanPolicies, policyDetail, setPolicy, type AdmissionDeps } from '../budgets/service.js';
import { invalidArgument, isAppError, notFound } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { Auth } from '../http/auth.js';

const scopeParams = z.object({
  scope: z.string().min(1).max(100).describe('`endpoint:<slug-or-id>`'),
  queue: z.string().min(1).max(100).describe('One of the endpoint’s queues.'),
});

interface Scope {
  scope: string;
  endpointId: string;
  queues: string[];
}

async function resolveScope(
  deps: AdmissionDeps & { publicUrl: string },
  humanId: string,
  scope: string,
): Promise<Scope> {
  const match = /^endpoint:(.+)$/.exec(scope);
  if (!match?.[1]) throw notFound('scope', scope);
  try {
    const endpoint = await resolveEndpoint(deps, humanId, match[1]);
    return { scope: `endpoint:${endpoint.slug}`, endpointId: endpoint.id, queues: endpoint.queues };
  } catch (err) {
    throw isAppError(err, 'not_found') ? notFound('scope', scope) : err;
  }
}

export function admissionRoutes(app: FastifyInstance, deps: AdmissionDeps & { publicUrl: string }, auth: Auth): void {
  const budgets = { tag: 'budgets', access: 'human' } as const;
  route(
    app,
    {
      ...budgets,
      method: 'GET',
      url: '/api/v1/admission',
      summary: 'Every budget on your endpoints, with status and usage.',
      answers: { 200: budgetListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return { policies: await humanPolicies(deps, human.id) };
    },
  );
  route(
    app,
    {
      ...budgets,
      method: 'GET',
      url: '/api/v1/admission/:scope/:queue',
      summary: 'One queue’s budget, its last windows and its audit.',
      params: scopeParams,
      answers: { 200: budgetDetailOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const scope = await resolveScope(deps, human.id, request.params.scope);
      return { scope: scope.scope, ...(await policyDetail(deps, scope.endpointId, request.params.queue)) };
    },
  );
  route(
    app,
    {
      ...budgets,
      method: 'PUT',
      url: '/api/v1/admission/:scope/:queue',
      summary: 'Set a queue’s budget (a full replace).',
      params: scopeParams,
      body: policyShape,
      answers: { 201: budgetSetOut, 200: budgetSetOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const scope = await resolveScope(deps, human.id, request.params.scope);
      const queue = request.params.queue;
      if (!scope.queues.includes(queue)) {
        throw invalidArgument('queue', `"${queue}" is not one of this endpoint's queues (${scope.queues.join(', ')})`);
      }
      const result = await setPolicy(
        deps,
        { humanId: human.id, endpointId: null },
        scope.endpointId,
        queue,
        request.body,
      );
      return reply.status(result.created ? 201 : 200).send({ scope: scope.scope, ...result });
    },
  );
  route(
    app,
    {
      ...budgets,
      method: 'DELETE',
      url: '/api/v1/admission/:scope/:queue',
      summary: 'Remove a queue’s budget.',
      params: scopeParams,
      answers: { 200: budgetClearedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      const scope = await resolveScope(deps, human.id, request.params.scope);
      const actor = { humanId: human.id, endpointId: null };
      return { scope: scope.scope, ...(await clearPolicy(deps, actor, scope.endpointId, request.params.queue)) };
    },
  );
}
