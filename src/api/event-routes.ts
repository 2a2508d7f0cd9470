// /api/v1 routes for provider webhooks' signing secrets and the event history
// (docs/design/intake.md): set or regenerate a webhook's secret, list an endpoint's
// events, show one, replay one.

import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import { listEvents, replayEvent, showEvent } from '../webhooks/events.js';
import { setWebhookSecret, type WebhookDeps } from '../webhooks/manage.js';
import type { RecordDeps } from '../webhooks/record.js';

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { id: string } };

/** Query strings arrive as text; the limit is turned into a number for validation. */
function limitQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function eventRoutes(app: FastifyInstance, deps: WebhookDeps & RecordDeps, auth: Auth): void {
  app.post<IdParams>('/api/v1/webhooks/:id/secret', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return setWebhookSecret(deps, { humanId: human.id }, request.params.id, request.body);
  });
  app.get<RefParams>('/api/v1/endpoints/:ref/events', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return listEvents(deps, human.id, request.params.ref, limitQuery(request.query));
  });
  app.get<IdParams>('/api/v1/events/:id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return showEvent(deps, { humanId: human.id }, request.params.id);
  });
  app.post<IdParams>('/api/v1/events/:id/replay', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await replayEvent(deps, { humanId: human.id }, request.params.id));
  });
}
