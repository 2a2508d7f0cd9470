// /api/v1 routes for routing rules, trusted actors and the quarantine
// (docs/design/routing.md): read and replace a webhook's rules, dry-run them, set or clear
// its trusted actors; list, show, release and discard quarantined events.

import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import { clearTrust, getRules, setRules, setTrust, testRules, type RoutingDeps } from '../routing/manage.js';
import { discardQuarantine, listQuarantine, releaseQuarantine, showQuarantine } from '../routing/quarantine.js';
import type { RecordDeps } from '../webhooks/record.js';

type IdParams = { Params: { id: string } };

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
  app.get<IdParams>('/api/v1/webhooks/:id/rules', async (request, reply) =>
    getRules(deps, await human(request, reply), request.params.id),
  );
  app.put<IdParams>('/api/v1/webhooks/:id/rules', async (request, reply) =>
    setRules(deps, await human(request, reply), request.params.id, request.body),
  );
  app.post<IdParams>('/api/v1/webhooks/:id/rules/test', async (request, reply) =>
    testRules(deps, await human(request, reply), request.params.id, request.body),
  );
  app.put<IdParams>('/api/v1/webhooks/:id/trusted-actors', async (request, reply) =>
    setTrust(deps, await human(request, reply), request.params.id, request.body),
  );
  app.delete<IdParams>('/api/v1/webhooks/:id/trusted-actors', async (request, reply) =>
    clearTrust(deps, await human(request, reply), request.params.id),
  );
  app.get('/api/v1/quarantine', async (request, reply) =>
    listQuarantine(deps, await human(request, reply), listQuery(request.query)),
  );
  app.get<IdParams>('/api/v1/quarantine/:id', async (request, reply) =>
    showQuarantine(deps, await human(request, reply), request.params.id),
  );
  app.post<IdParams>('/api/v1/quarantine/:id/release', async (request, reply) => {
    const owner = await human(request, reply);
    return releaseQuarantine(deps, owner, request.params.id, owner);
  });
  app.post<IdParams>('/api/v1/quarantine/:id/discard', async (request, reply) => {
    const owner = await human(request, reply);
    return discardQuarantine(deps, owner, request.params.id, owner, request.body);
  });
}
