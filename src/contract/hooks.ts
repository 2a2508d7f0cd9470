// Notify hooks on the wire (docs/design/hooks-and-presence.md): the MCP verbs' output schemas
// and the REST contract's answers; never a secret but the one create and rotate show.

import { z } from 'zod';
import { time } from './shapes.js';

/** A hook as its endpoint sees it (src/hooks/manage.ts, HookView): never its secret. */
export const hookOut = z.object({
  hook_id: z.string(),
  url: z.string(),
  queues: z.array(z.string()).describe('The queues it notifies for; empty: all granted.'),
  ignore_presence: z.boolean(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  health: z.object({
    consecutive_failures: z.number().int(),
    last_attempt_at: time.nullable(),
    last_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
  }),
  created_at: time,
});

/** create and rotate answer the secret, once. */
export const hookWithSecret = hookOut.extend({
  signing_secret: z.string().describe('Shown only now: verifies webhook-signature (Standard Webhooks).'),
});

export const hookListOut = z.object({
  hooks: z.array(hookOut),
  max: z.number().int().describe('How many hooks an endpoint may have.'),
  used: z.number().int(),
});
export const hookDeletedOut = z.object({ hook_id: z.string(), deleted: z.literal(true) });
