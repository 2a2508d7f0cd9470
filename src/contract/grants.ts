// What the grant routes answer (docs/design/handoff.md, "Grants"): a grant as both of its
// owners see it, the list of both directions, and one grant's history.

import { z } from 'zod';
import { time } from './shapes.js';

export const grantOut = z.object({
  id: z.string().describe('`gr_…`'),
  from: z.string().describe('The sending endpoint (slug).'),
  to: z.string().describe('The endpoint whose queues the sender may put todos on (slug).'),
  queues: z.array(z.string()),
  state: z
    .enum(['active', 'requested', 'denied', 'revoked'])
    .describe("active within one owner or once approved; requested until the target's owner decides."),
  max_priority: z.number().int().nullable().describe('The highest priority a handed-off todo may ask for.'),
  rate_per_hour: z.number().int().nullable().describe('Hand-offs allowed per hour; null: no limit.'),
  requested_by: z.string().describe('The human who created or requested it.'),
  decided_by: z.string().nullable().describe('The human who approved or denied it (the creator within one owner).'),
  revoked_by: z.string().nullable(),
  created_at: time,
  decided_at: time.nullable(),
  revoked_at: time.nullable(),
});

export const grantOneOut = z.object({ grant: grantOut });
export const grantListOut = z.object({ grants: z.array(grantOut).describe('Both directions, newest first.') });
export const grantShowOut = z.object({
  grant: grantOut,
  audit: z
    .array(
      z.object({
        actor_human_id: z.string(),
        action: z.enum(['create', 'request', 'approve', 'deny', 'revoke']),
        detail: z.record(z.string(), z.unknown()),
        at: time,
      }),
    )
    .describe("The grant's history, oldest first; both owners read the same record."),
});
