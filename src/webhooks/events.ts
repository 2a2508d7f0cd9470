// The event history as an endpoint's owner reads it, and replay (docs/design/intake.md,
// "The event history" and "Replay"): list an endpoint's latest events, show one with what
// was stored of its delivery, and replay one — its todo made again from the stored
// delivery, as a new event linked to the original (never deduplicated: a replay is asked for).

import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { parseInput } from '../domain/todo.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import { eventOf, listEvents as listRows, type EventDetail, type EventSummary } from '../store/webhook-events.js';
import { webhookRoutingOf, type WebhookOwner } from '../store/webhooks.js';
import { decideEvent, NO_ROUTING } from '../routing/route.js';
import { readingOf } from './ingest.js';
import { recordEvent, type RecordDeps } from './record.js';
import type { Provider } from './verify.js';

/** The most events one list answers; the history is for review, not export. */
export const EVENT_LIST_MAX = 200;

export const listEventsInput = z.strictObject({
  limit: z
    .number()
    .int()
    .min(1)
    .max(EVENT_LIST_MAX)
    .optional()
    .describe(`How many, newest first (1–${EVENT_LIST_MAX}, default 50).`),
});

/** An event as the list answers it (the contract's fields, plus where it went). */
function summaryView(e: EventSummary) {
  return {
    id: e.id,
    provider: e.provider,
    type: e.type,
    actor: e.actor,
    delivery_id: e.delivery_id,
    verified: e.verified,
    disposition: e.disposition,
    todo_ids: e.todo_ids,
    received_at: e.received_at,
    webhook_id: e.webhook_id,
    queue: e.queue,
    replay_of: e.replay_of,
  };
}

function detailView(e: EventDetail) {
  return { ...summaryView(e), content_type: e.content_type, headers: e.headers, payload: e.payload, trace: e.trace };
}

/** GET /api/v1/endpoints/{ref}/events: one of this human's endpoints' latest events. */
export async function listEvents(deps: EndpointDeps, humanId: string, ref: string, query: unknown) {
  const data = parseInput(listEventsInput, query);
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return listEventsOf(deps, endpoint.id, data);
}

/** An endpoint's latest events (its own, for an agent). */
export async function listEventsOf(deps: EndpointDeps, endpointId: string, data: z.infer<typeof listEventsInput>) {
  const events = await listRows(deps.db, endpointId, data.limit ?? 50);
  return { events: events.map(summaryView) };
}

export async function showEvent(deps: EndpointDeps, owner: WebhookOwner, id: string) {
  const event = await eventOf(deps.db, owner, id);
  if (!event) throw notFound('event', id);
  return { event: detailView(event) };
}

/**
 * The event a todo's route names, as the board links it: what arrived, and the endpoint
 * whose history holds it (the webhook's, which a fan-out todo's endpoint may not be).
 * Null when it is not the human's or is gone (past retention).
 */
export async function eventOfRoute(deps: EndpointDeps, humanId: string, id: string) {
  const event = await eventOf(deps.db, { humanId }, id);
  return event ? { ...summaryView(event), endpoint_id: event.endpoint_id } : null;
}

export async function replayEvent(deps: EndpointDeps & RecordDeps, owner: WebhookOwner, id: string) {
  const original = await eventOf(deps.db, owner, id);
  if (!original) throw notFound('event', id);
  const header = (name: string) => original.headers[name];
  const reading = readingOf(original.provider as Provider, header, original.payload);
  // Routed by the webhook's rules as they are now: a fixed rule makes what a faulted event could not.
  const routing = original.webhook_id === null ? null : await webhookRoutingOf(deps.db, owner, original.webhook_id);
  const decision = decideEvent(
    routing ?? NO_ROUTING,
    {
      provider: original.provider,
      queue: original.queue,
      reading,
      headers: original.headers,
      payload: reading.payload,
      priority: undefined,
    },
    deps.routing,
  );
  const made = await recordEvent(deps, {
    webhook: {
      id: original.webhook_id,
      endpoint_id: original.endpoint_id,
      queue: original.queue,
      provider: original.provider,
      human_id: original.human_id,
    },
    reading: { ...reading, deliveryId: original.delivery_id },
    decision,
    verified: original.verified,
    contentType: original.content_type,
    headers: original.headers,
    payload: original.payload,
    dedup: false,
    replayOf: original.id,
  });
  const event = await eventOf(deps.db, owner, made.event_id as string);
  if (!event) throw notFound('event', made.event_id as string);
  return { event: detailView(event), todos: made.todos, replay_of: original.id, disposition: made.disposition };
}
