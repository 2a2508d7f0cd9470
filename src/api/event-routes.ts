// /api/v1 routes for provider webhooks and their event history (docs/design/intake.md):
// make, list, rotate and delete an endpoint's webhooks, set or regenerate a webhook's
// signing secret, list an endpoint's events, show one, replay one.

import type { FastifyInstance } from 'fastify';
import {
  eventListOut,
  eventReplayOut,
  eventShowOut,
  webhookCreatedOut,
  webhookListOut,
  webhookRotatedOut,
  webhookSecretOut,
} from '../contract/webhooks.js';
import type { Auth } from '../http/auth.js';
import { route } from '../http/contract.js';
import { listEvents, listEventsInput, replayEvent, showEvent } from '../webhooks/events.js';
import {
  createWebhook,
  createWebhookInput,
  deleteWebhook,
  listWebhooks,
  rotateWebhook,
  setWebhookSecret,
  webhookSecretInput,
  type WebhookDeps,
} from '../webhooks/manage.js';
import type { RecordDeps } from '../webhooks/record.js';
import { deletedAnswer, idParams, refParams } from './contract-common.js';

/** Query strings arrive as text; the limit is turned into a number for validation. */
function limitQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function eventRoutes(app: FastifyInstance, deps: WebhookDeps & RecordDeps, auth: Auth): void {
  const webhooks = { tag: 'webhooks', access: 'human' } as const;
  const events = { tag: 'events', access: 'human' } as const;
  route(
    app,
    {
      ...webhooks,
      method: 'POST',
      url: '/api/v1/endpoints/:ref/webhooks',
      summary: 'Make a webhook: its URL, and a generated secret, shown once.',
      params: refParams,
      body: createWebhookInput,
      answers: { 201: webhookCreatedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await createWebhook(deps, human.id, request.params.ref, request.body));
    },
  );
  route(
    app,
    {
      ...webhooks,
      method: 'GET',
      url: '/api/v1/endpoints/:ref/webhooks',
      summary: 'List an endpoint’s webhooks.',
      params: refParams,
      answers: { 200: webhookListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return { webhooks: await listWebhooks(deps, human.id, request.params.ref) };
    },
  );
  route(
    app,
    {
      ...webhooks,
      method: 'POST',
      url: '/api/v1/webhooks/:id/rotate',
      summary: 'A new ingest URL; the old one stops at once.',
      params: idParams,
      answers: { 200: webhookRotatedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return rotateWebhook(deps, { humanId: human.id }, request.params.id);
    },
  );
  route(
    app,
    {
      ...webhooks,
      method: 'DELETE',
      url: '/api/v1/webhooks/:id',
      summary: 'Delete a webhook.',
      params: idParams,
      answers: { 200: deletedAnswer },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return deleteWebhook(deps, { humanId: human.id }, request.params.id);
    },
  );
  route(
    app,
    {
      ...webhooks,
      method: 'POST',
      url: '/api/v1/webhooks/:id/secret',
      summary: 'Set the signing secret the provider issued, or generate one (shown once).',
      params: idParams,
      body: webhookSecretInput,
      answers: { 200: webhookSecretOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return setWebhookSecret(deps, { humanId: human.id }, request.params.id, request.body);
    },
  );
  route(
    app,
    {
      ...events,
      method: 'GET',
      url: '/api/v1/endpoints/:ref/events',
      summary: 'An endpoint’s latest webhook events, newest first.',
      params: refParams,
      query: listEventsInput,
      answers: { 200: eventListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return listEvents(deps, human.id, request.params.ref, limitQuery(request.query));
    },
  );
  route(
    app,
    {
      ...events,
      method: 'GET',
      url: '/api/v1/events/:id',
      summary: 'One event, with what was stored of the delivery.',
      params: idParams,
      answers: { 200: eventShowOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return showEvent(deps, { humanId: human.id }, request.params.id);
    },
  );
  route(
    app,
    {
      ...events,
      method: 'POST',
      url: '/api/v1/events/:id/replay',
      summary: 'Make an event’s todos again, as a new event linked to it.',
      params: idParams,
      answers: { 201: eventReplayOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await replayEvent(deps, { humanId: human.id }, request.params.id));
    },
  );
}
