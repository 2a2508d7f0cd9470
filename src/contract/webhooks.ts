// Provider webhooks and their event history on the wire: the MCP verbs' output schemas and
// the REST contract's answers (docs/design/intake.md, docs/design/api-contract.md).

import { z } from 'zod';
import { time } from './shapes.js';

/** A provider webhook (src/store/webhooks.ts, Webhook); never its secret. */
export const webhookOut = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  name: z.string(),
  queue: z.string(),
  provider: z.string(),
  created_at: time,
  rotated_at: time.nullable(),
  last_delivery_at: time.nullable(),
});

/** A received delivery as the event history lists it (src/store/webhook-events.ts). */
export const eventSummaryOut = z.object({
  id: z.string(),
  provider: z.string(),
  type: z.string().nullable().describe('The provider’s event type, the todo’s kind.'),
  actor: z.string().nullable(),
  delivery_id: z.string().nullable(),
  verified: z.boolean().describe('Its provider signature verified (false for a token webhook).'),
  disposition: z.string(),
  todo_ids: z.array(z.string()),
  received_at: time,
  webhook_id: z.string().nullable(),
  queue: z.string(),
  replay_of: z.string().nullable(),
});

/** One event with what was stored of the delivery. */
export const eventOut = eventSummaryOut.extend({
  content_type: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  payload: z.unknown(),
  trace: z.unknown(),
});

/** A new webhook: its ingest URL (the credential of a `token` webhook) and a generated secret, shown once. */
export const webhookCreatedOut = z.object({ webhook: webhookOut, url: z.string(), secret: z.string().optional() });
export const webhookListOut = z.object({ webhooks: z.array(webhookOut) });
/** A new ingest URL; the old one stops at once. */
export const webhookRotatedOut = z.object({ webhook: webhookOut, url: z.string() });
export const webhookSecretOut = z.object({
  webhook: webhookOut,
  secret: z.string().optional().describe('Present when generated: shown once.'),
  previous_valid_until: time.nullable().describe('Until when the old secret still verifies.'),
});
export const eventListOut = z.object({ events: z.array(eventSummaryOut) });
export const eventShowOut = z.object({ event: eventOut });
/** A replay: a new event linked to the original, and the todos it made. */
export const eventReplayOut = z.object({
  event: eventOut,
  todos: z.array(
    z.object({ id: z.string(), queue: z.string(), created: z.boolean(), endpoint: z.string().optional() }),
  ),
  replay_of: z.string(),
  disposition: z
    .string()
    .describe("What the webhook's rules, as they are now, did with it: routed, dropped, quarantined, faulted…"),
});
