// Budgets (admission policies) on the wire: a queue's policy, status and usage, for the MCP
// verbs' output schemas and the REST contract's answers (docs/design/admission.md, "Wire
// shapes"; docs/design/api-contract.md).

import { z } from 'zod';
import { admissionStateOut, time, usageOut } from './shapes.js';

/** A policy as tools/list shows it; the operator API takes the same body. */
export const policyShape = z
  .object({
    max_in_flight: z.number().int().min(0).max(10_000).nullable().describe('Claims in flight at once; 0 pauses.'),
    max_claims_per_window: z.number().int().min(0).max(1_000_000).nullable().describe('Claims per window.'),
    window: z
      .object({
        period: z.enum(['hour', 'day', 'week']),
        tz: z.string().describe('IANA zone, e.g. Europe/London.'),
        start: z.string().describe('Local HH:MM the window starts at.'),
        weekday: z.enum(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']).optional(),
      })
      .nullable()
      .describe('Required with max_claims_per_window.'),
  })
  .describe('A full replace of the queue’s budget.');

const windowOut = z.object({
  period: z.enum(['hour', 'day', 'week']),
  tz: z.string(),
  start: z.string(),
  weekday: z.enum(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']).optional(),
});

/** A budgeted queue's status (src/admission/status.ts, QueueStatus). */
export const queueStatusOut = z.object({
  queue: z.string(),
  policy: z.object({
    queue: z.string(),
    max_in_flight: z.number().int().nullable(),
    max_claims_per_window: z.number().int().nullable(),
    window: windowOut.nullable(),
    created_at: time,
    updated_at: time,
  }),
  status: admissionStateOut,
  usage: usageOut.nullable(),
  pending: z.number().int(),
});

/** A budget as the REST API lists it: which endpoint's queue it holds (`endpoint:<slug>`). */
export const budgetOut = queueStatusOut.extend({ scope: z.string(), endpoint_id: z.string() });
export const budgetListOut = z.object({ policies: z.array(budgetOut) });
export const budgetDetailOut = queueStatusOut.extend({
  scope: z.string(),
  windows: z.array(z.looseObject({})).describe('The last windows’ claim counts, newest first.'),
  audit: z.array(z.looseObject({})).describe('The latest changes to the policy, newest first.'),
});
export const budgetSetOut = queueStatusOut.extend({
  scope: z.string(),
  created: z.boolean().describe('true (201): the queue had no budget before.'),
});
export const budgetClearedOut = z.object({ scope: z.string(), queue: z.string(), deleted: z.literal(true) });
