// What the routing routes answer (docs/design/routing.md): a webhook's rules and trust
// gate, the dry run's predictions, and quarantine items. Shared by the REST contract and
// the MCP verbs' output schemas.

import { z } from 'zod';
import { RULE_DEFAULTS } from '../domain/routing.js';
import { time } from './shapes.js';

const rule = z.object({
  id: z.string().describe('`rl_…`, kept across saves when sent back.'),
  name: z.string(),
  when: z.string().describe('A CEL expression over {event, payload}.'),
  then: z.record(z.string(), z.unknown()).describe('{action: route|drop|quarantine, …}'),
});

export const trustOut = z.object({
  actors: z.array(z.string()).nullable().describe('Trusted logins or ids; null: no gate.'),
  when: z.string().nullable().describe('A CEL expression that also trusts an actor.'),
  enforced: z.boolean(),
});

export const rulesOut = z.object({ rules: z.array(rule), default: z.enum(RULE_DEFAULTS) });
export const rulesShowOut = rulesOut.extend({ trusted_actors: trustOut });
export const trustSetOut = z.object({ trusted_actors: trustOut });

const wouldMake = z.object({
  endpoint: z.string().nullable().describe("An endpoint slug; null: the webhook's own."),
  queue: z.string(),
  title: z.string(),
  kind: z.string().nullable(),
  priority: z.number().int().optional(),
});

export const rulesTestOut = z.object({
  results: z.array(
    z.object({
      event_id: z.string().nullable().describe('The delivery replayed; null for a given payload.'),
      rule_id: z.string(),
      rule_name: z.string(),
      action: z.enum(['routed', 'duplicate', 'dropped', 'quarantined', 'faulted']),
      reason: z.string().optional(),
      once: z.string().optional().describe('The work-order key the rule produced.'),
      todos: z.array(wouldMake),
      trace: z.array(z.record(z.string(), z.unknown())),
    }),
  ),
});

export const quarantineItemOut = z.object({
  id: z.string(),
  event_id: z.string(),
  webhook_id: z.string().nullable(),
  actor: z.string().nullable(),
  reason: z.string(),
  rule_id: z.string().nullable(),
  state: z.enum(['held', 'released', 'discarded', 'expired']),
  would_make: z.unknown().describe('What routing would have made: [{endpoint, queue, title, kind}].'),
  created_at: time,
  resolved_at: time.nullable(),
  resolved_by: z.string().nullable().describe('`human:<id>` or `endpoint:<id>`.'),
  resolution: z.string().nullable(),
  todo_ids: z.array(z.string()),
});

export const quarantineListOut = z.object({ items: z.array(quarantineItemOut) });
export const quarantineShowOut = z.object({
  item: quarantineItemOut.extend({ event: z.record(z.string(), z.unknown()).nullable() }),
});
export const quarantineReleaseOut = z.object({
  todos: z.array(
    z.object({ id: z.string(), queue: z.string(), created: z.boolean(), endpoint: z.string().optional() }),
  ),
  outcome: z.string().describe('What the rules did with it now: routed, dropped, duplicate…'),
  item: quarantineItemOut.optional(),
});
export const quarantineDiscardOut = z.object({ item: quarantineItemOut.nullable() });
