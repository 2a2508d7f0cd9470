// An endpoint's presence on the wire (docs/design/hooks-and-presence.md): the MCP self
// verbs' output schema and the REST presence routes' answer, one schema for both.

import { z } from 'zod';
import { time } from './shapes.js';

/** The endpoint's presence (src/presence/manage.ts, PresenceView). */
export const presenceOut = z.object({
  presence: z.enum(['in', 'out']),
  source: z.enum(['agent', 'operator', 'shift', 'default']).describe('What decided it.'),
  until: time.nullable().describe('When it changes by itself; null: not by itself.'),
  shift: z.string().nullable(),
  pending: z.number().int().describe('Todos waiting on this endpoint.'),
});
