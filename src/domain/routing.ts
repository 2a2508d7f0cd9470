// The shape of a webhook's routing rules (docs/design/routing.md): what PUT
// /api/v1/webhooks/{id}/rules takes and what is stored. The expressions inside are
// checked and compiled by routing/rules.ts; this is only their outline.

import { z } from 'zod';
import { SLUG } from './endpoint.js';
import { maxLength } from './issues.js';
import { QUEUE_NAME } from './todo.js';

const reason = z.string().trim().min(1).check(maxLength(200));
const expression = z.string().min(1, 'must not be empty');

export const routeThen = z.strictObject({
  action: z.literal('route'),
  queue: z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}').optional(),
  endpoints: z
    .array(z.string().regex(SLUG, 'must be an endpoint slug'))
    .min(1)
    .optional()
    .describe("Endpoint slugs (the webhook owner's); default: the webhook's endpoint."),
  title: expression.optional().describe('A template: text with {{ CEL }} parts.'),
  kind: expression.optional().describe('A template.'),
  priority: z.union([z.number().int(), expression]).optional().describe('A number, or a CEL expression.'),
  not_before: expression.optional().describe('A CEL expression giving a timestamp or an RFC 3339 text.'),
  idempotency_key: expression.optional().describe('A template.'),
  once: expression
    .optional()
    .describe('A CEL expression: a work-order key; a second event with the same key makes nothing.'),
});
const dropThen = z.strictObject({ action: z.literal('drop'), reason: reason.optional() });
const quarantineThen = z.strictObject({ action: z.literal('quarantine'), reason: reason.optional() });
export const ruleThen = z.discriminatedUnion('action', [routeThen, dropThen, quarantineThen]);
export type RuleThen = z.infer<typeof ruleThen>;

export const ruleInput = z.strictObject({
  id: z
    .string()
    .regex(/^rl_[0-9A-Za-z]{1,40}$/, 'must be a rule id (rl_…)')
    .optional(),
  name: z.string().trim().min(1).check(maxLength(100)),
  when: expression,
  then: ruleThen,
});
export const RULE_DEFAULTS = ['route', 'drop'] as const;
export type RuleDefault = (typeof RULE_DEFAULTS)[number];
export const setRulesInput = z.strictObject({
  rules: z
    .array(ruleInput)
    .max(1000)
    .describe('The ordered rules, first match wins: [{name, when: CEL, then: {action: route|drop|quarantine, …}}].'),
  default: z
    .enum(RULE_DEFAULTS)
    .optional()
    .describe("When no rule matches: route to the webhook's queue (default), or drop."),
});

/** A rule as stored and answered. */
export interface Rule {
  id: string;
  name: string;
  when: string;
  then: RuleThen;
}

/** A quarantined event's states (docs/design/routing.md "Trust and quarantine"). */
export const QUARANTINE_STATES = ['held', 'released', 'discarded', 'expired'] as const;
export type QuarantineState = (typeof QUARANTINE_STATES)[number];

/**
 * The order a trace step's fields are shown in (the stored trace is jsonb, which keeps no
 * key order): what identifies the step first, then what it decided, then the rest as stored.
 */
const STEP_FIELD_ORDER = [
  'rule_id',
  'name',
  'position',
  'matched',
  'rule',
  'action',
  'reason',
  'values',
  'actor',
  'trusted',
  'key',
  'endpoint',
  'queue',
  'todo_id',
];

/** A trace step's fields but its kind, in STEP_FIELD_ORDER (the CLI's `todo show`, the board's drawer). */
export function stepFields(step: Record<string, unknown>): [string, unknown][] {
  const rank = (k: string) => {
    const i = STEP_FIELD_ORDER.indexOf(k);
    return i < 0 ? STEP_FIELD_ORDER.length : i;
  };
  return Object.entries(step)
    .filter(([k]) => k !== 'step')
    .sort(([a], [b]) => rank(a) - rank(b));
}
