// The admission verbs (docs/design/admission.md, "Wire shapes"): admission_status rides
// on the drain grant; set_admission_policy and clear_admission_policy are their own
// family (granted only on purpose: they let the agent change its own budget) and call the
// same service as the operator API, auditing the endpoint as the actor beside its owner.

import { z } from 'zod/v4';
import { z as z3 } from 'zod';
import { AppError } from '../../domain/errors.js';
import { parseInput } from '../../domain/todo.js';
import { clearPolicy, setPolicy, statuses } from '../../budgets/service.js';
import type { Verb, VerbContext } from './types.js';

const queue = z.string().describe('A queue name granted to this endpoint, e.g. `inbox`.');
const statusInput = z3.object({ queue: z3.string().optional() }).strict();
const writeInput = z3.object({ queue: z3.string(), policy: z3.unknown() }).strict();
const clearInput = z3.object({ queue: z3.string() }).strict();

function granted(ctx: VerbContext, name: string): string {
  if (!ctx.agent.queues.includes(name)) {
    throw new AppError('forbidden', `queue: "${name}" is not one of this endpoint's granted queues`, {
      field: 'queue',
      granted: ctx.agent.queues,
    });
  }
  return name;
}

const actorOf = (ctx: VerbContext) => ({ humanId: ctx.endpoint.human_id, endpointId: ctx.endpoint.id });

const policyShape = z
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

export const admissionVerbs: Verb[] = [
  {
    name: 'admission_status',
    description:
      "This endpoint's budgeted queues (or one): the policy, whether it admits now or defers (why, until when), " +
      'and the usage of the current window. Queues without a budget are not listed.',
    input: z.strictObject({ queue: queue.optional() }),
    async run(ctx, args) {
      const data = parseInput(statusInput, args);
      const queues = data.queue === undefined ? ctx.agent.queues : [granted(ctx, data.queue)];
      return { queues: await statuses({ db: ctx.todos.db }, ctx.endpoint.id, queues) };
    },
  },
  {
    name: 'set_admission_policy',
    description:
      "Set (fully replace) a granted queue's budget: at most max_in_flight claims at once and " +
      'max_claims_per_window claims per window. Every claim is charged, retries and takeovers included.',
    input: z.strictObject({ queue, policy: policyShape }),
    async run(ctx, args) {
      const data = parseInput(writeInput, args);
      const name = granted(ctx, data.queue);
      return setPolicy({ db: ctx.todos.db }, actorOf(ctx), ctx.endpoint.id, name, data.policy, 'policy.');
    },
  },
  {
    name: 'clear_admission_policy',
    description: "Remove a granted queue's budget: it is claimed as if it never had one, at once.",
    input: z.strictObject({ queue }),
    async run(ctx, args) {
      const data = parseInput(clearInput, args);
      return clearPolicy({ db: ctx.todos.db }, actorOf(ctx), ctx.endpoint.id, granted(ctx, data.queue));
    },
  },
];
