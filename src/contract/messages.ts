// A session's message queue on the wire (docs/design/message-queue.md, "Surfaces"): the
// answers of /api/v1/sessions/{id}/queue and of the capacity setting. The use cases build
// the values (src/messages/queue.ts; capacityView in src/api/message-routes.ts).

import { z } from 'zod';
import { QUEUED_BY } from '../domain/messages.js';
import { time } from './shapes.js';

/** A pending message (src/messages/queue.ts, EntryView). */
export const entryOut = z.object({
  id: z.string().describe('The entry id (a UUID).'),
  position: z.number().int().describe('From 1, over the visible messages.'),
  content: z.string(),
  queued_by: z.enum(QUEUED_BY),
  sender_id: z
    .string()
    .nullable()
    .describe('Who queued it: a human, a workflow token or an endpoint id; null: the server.'),
  queued_at: time,
});

/** A session's visible queue (src/messages/queue.ts, QueueStatus). */
export const queueStatusOut = z.object({
  session_id: z.string(),
  entries: z.array(entryOut),
  count: z.number().int().describe('Visible (pending) messages; in-flight ones are not counted.'),
  max: z.number().int().describe('The capacity in force; 0: unlimited.'),
});

export const queueClearedOut = z.object({ removed: z.number().int() });
export const entryRemovedOut = z.object({ entry_id: z.string() });

/** The capacity setting: what is saved, and what applies with where it comes from. */
export const capacityOut = z.object({
  settings: z.object({ max_per_session: z.number().int().nullable().describe('Saved; null: none saved.') }),
  effective: z.object({
    max_per_session: z.number().int().describe('In force; 0: unlimited.'),
    source: z.enum(['default', 'setting', 'environment']),
    locked: z.boolean().describe('The environment fixes it: saving is refused.'),
  }),
});
