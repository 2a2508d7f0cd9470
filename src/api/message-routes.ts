// /api/v1 routes of the session message queue (the REST twins of the /ws actions) and
// of its install-wide capacity setting. A human acts on sessions of endpoints they own;
// a workflow token may only add (its messages are queued_by workflow). Capacity: any
// signed-in human reads it, an admin writes it.

import type { FastifyInstance } from 'fastify';
import type { Principal } from '../identity/principal.js';
import type { Capacity } from '../domain/messages.js';
import type { Actor, MessageDeps } from '../messages/context.js';
import {
  addMessage,
  clearMessages,
  editMessage,
  queueStatus,
  removeMessage,
  reorderMessages,
} from '../messages/queue.js';
import type { Auth } from '../http/auth.js';

type SessionParams = { Params: { id: string } };
type EntryParams = { Params: { id: string; entry: string } };

export function actorOf(principal: Principal): Actor {
  return principal.token?.kind === 'workflow'
    ? { kind: 'workflow', humanId: principal.human.id, tokenId: principal.token.id }
    : { kind: 'user', humanId: principal.human.id };
}

/** The body with the path's entry id; a body that is not an object is passed on for the use case to refuse. */
function withEntry(body: unknown, entry: string): unknown {
  return body && typeof body === 'object' && !Array.isArray(body) ? { ...body, entry_id: entry } : body;
}

/**
 * The capacity view (docs/design/message-queue.md, "Surfaces"): the saved setting, and
 * what applies with where it comes from.
 */
export function capacityView(c: Capacity) {
  return {
    settings: { max_per_session: c.configured },
    effective: { max_per_session: c.effective, source: c.source, locked: c.locked },
  };
}

export function messageRoutes(app: FastifyInstance, deps: MessageDeps, auth: Auth): void {
  const base = '/api/v1/sessions/:id/queue';
  app.get<SessionParams>(base, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return queueStatus(deps, actorOf(principal), request.params.id);
  });
  app.post<SessionParams>(base, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'workflow');
    const { entry } = await addMessage(deps, actorOf(principal), request.params.id, request.body);
    return reply.status(201).send(entry);
  });
  app.delete<SessionParams>(base, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    const { removed } = await clearMessages(deps, actorOf(principal), request.params.id);
    return { removed };
  });
  app.post<SessionParams>(`${base}/reorder`, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return reorderMessages(deps, actorOf(principal), request.params.id, request.body);
  });
  app.patch<EntryParams>(`${base}/:entry`, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    const body = withEntry(request.body, request.params.entry);
    return (await editMessage(deps, actorOf(principal), request.params.id, body)).entry;
  });
  app.delete<EntryParams>(`${base}/:entry`, async (request, reply) => {
    const principal = await auth.authenticate(request, reply, 'human');
    return removeMessage(deps, actorOf(principal), request.params.id, { entry_id: request.params.entry });
  });

  app.get('/api/v1/settings/message-queue', async (request, reply) => {
    await auth.authenticate(request, reply, 'human');
    return capacityView(await deps.capacity.snapshot());
  });
  app.patch('/api/v1/settings/message-queue', async (request, reply) => {
    await auth.authenticate(request, reply, 'admin');
    return capacityView(await deps.capacity.save(request.body ?? {}));
  });
}
