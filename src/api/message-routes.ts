// /api/v1 routes of the session message queue (the REST twins of the /ws actions) and
// of its install-wide capacity setting. A human acts on sessions of endpoints they own;
// a workflow token may only add (its messages are queued_by workflow). Capacity: any
// signed-in human reads it, an admin writes it.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Principal } from '../identity/principal.js';
import { addInput, capacityInput, editInput, reorderInput, type Capacity } from '../domain/messages.js';
import { route } from '../http/contract.js';
import { capacityOut, entryOut, entryRemovedOut, queueClearedOut, queueStatusOut } from '../contract/messages.js';
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

const sessionParams = z.object({ id: z.string().min(1).max(100).describe('The MCP session id.') });
const entryParams = sessionParams.extend({ entry: z.string().min(1).max(100).describe('The message’s entry id.') });

export function messageRoutes(app: FastifyInstance, deps: MessageDeps, auth: Auth): void {
  const base = '/api/v1/sessions/:id/queue';
  const tagged = { tag: 'messages', access: 'human' } as const;
  route(
    app,
    {
      ...tagged,
      method: 'GET',
      url: base,
      summary: 'A session’s message queue.',
      params: sessionParams,
      answers: { 200: queueStatusOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return queueStatus(deps, actorOf(principal), request.params.id);
    },
  );
  route(
    app,
    {
      ...tagged,
      access: 'workflow',
      method: 'POST',
      url: base,
      summary: 'Queue a message into a session.',
      params: sessionParams,
      body: addInput,
      answers: { 201: entryOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'workflow');
      const { entry } = await addMessage(deps, actorOf(principal), request.params.id, request.body);
      return reply.status(201).send(entry);
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'DELETE',
      url: base,
      summary: 'Remove every pending message of a session.',
      params: sessionParams,
      answers: { 200: queueClearedOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      const { removed } = await clearMessages(deps, actorOf(principal), request.params.id);
      return { removed };
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'POST',
      url: `${base}/reorder`,
      summary: 'Reorder a session’s pending messages.',
      params: sessionParams,
      body: reorderInput,
      answers: { 200: queueStatusOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return reorderMessages(deps, actorOf(principal), request.params.id, request.body);
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'PATCH',
      url: `${base}/:entry`,
      summary: 'Edit a pending message.',
      params: entryParams,
      body: editInput.omit({ entry_id: true }),
      answers: { 200: entryOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      const body = withEntry(request.body, request.params.entry);
      return (await editMessage(deps, actorOf(principal), request.params.id, body)).entry;
    },
  );
  route(
    app,
    {
      ...tagged,
      method: 'DELETE',
      url: `${base}/:entry`,
      summary: 'Remove a pending message.',
      params: entryParams,
      answers: { 200: entryRemovedOut },
    },
    async (request, reply) => {
      const principal = await auth.authenticate(request, reply, 'human');
      return removeMessage(deps, actorOf(principal), request.params.id, { entry_id: request.params.entry });
    },
  );

  route(
    app,
    {
      tag: 'settings',
      access: 'human',
      method: 'GET',
      url: '/api/v1/settings/message-queue',
      summary: 'The message queue’s capacity: saved and in force.',
      answers: { 200: capacityOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'human');
      return capacityView(await deps.capacity.snapshot());
    },
  );
  route(
    app,
    {
      tag: 'settings',
      access: 'admin',
      method: 'PATCH',
      url: '/api/v1/settings/message-queue',
      summary: 'Save the message queue’s capacity.',
      body: capacityInput,
      answers: { 200: capacityOut },
    },
    async (request, reply) => {
      await auth.authenticate(request, reply, 'admin');
      return capacityView(await deps.capacity.save(request.body ?? {}));
    },
  );
}
