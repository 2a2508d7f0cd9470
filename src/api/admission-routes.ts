// /api/v1/admission (docs/design/admission.md, "Wire shapes"): a human's budgets. {scope}
// is `endpoint:<slug-or-id>` (team scopes come with team queues); a scope that is
// unknown, malformed or another human's answers 404 not_found, the same on every route.
// PUT is a full replace, validated field by field before anything is written.

import type { FastifyInstance } from 'fastify';
import { clearPolicy, humanPolicies, policyDetail, setPolicy, type AdmissionDeps } from '../budgets/service.js';
import { invalidArgument, isAppError, notFound } from '../domain/errors.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { Auth } from '../http/auth.js';

type ScopeParams = { Params: { scope: string; queue: string } };

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
  app.get('/api/v1/admission', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return { policies: await humanPolicies(deps, human.id) };
  });
  app.get<ScopeParams>('/api/v1/admission/:scope/:queue', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    const scope = await resolveScope(deps, human.id, request.params.scope);
    return { scope: scope.scope, ...(await policyDetail(deps, scope.endpointId, request.params.queue)) };
  });
  app.put<ScopeParams>('/api/v1/admission/:scope/:queue', async (request, reply) => {
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
  });
  app.delete<ScopeParams>('/api/v1/admission/:scope/:queue', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    const scope = await resolveScope(deps, human.id, request.params.scope);
    const actor = { humanId: human.id, endpointId: null };
    return { scope: scope.scope, ...(await clearPolicy(deps, actor, scope.endpointId, request.params.queue)) };
  });
}
