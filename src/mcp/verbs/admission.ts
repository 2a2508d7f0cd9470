// The admission verbs (docs/design/admission.md, "Wire shapes"): admission_status rides
// on the drain grant; set_admission_policy and clear_admission_policy are their own
// family (granted only on purpose: they let the agent change its own budget) and call the
// same service as the operator API, auditing the endpoint as the actor beside its owner.

import { z } from 'zod';
import { AppError } from '../../domain/errors.js';
import { parseInput, QUEUE_DESCRIPTION } from '../../domain/todo.js';
import { clearPolicy, setPolicy, statuses } from '../../budgets/service.js';
import { policyShape, queueStatusOut } from '../../contract/budgets.js';
import type { Verb, VerbContext } from './types.js';
import { DESTROYS, READS, SETTLES } from './types.js';

const queue = z.string().describe(QUEUE_DESCRIPTION);

/**
 * `policy` takes any value: the admission service checks it (parsePolicy), with the
 * operator API's rules and messages, every problem named `policy.…`; an absent one is
 * "policy: must be an object" from there too. The identity preprocess lets the absent key
 * through to it (zod 4 refuses an absent `z.unknown()` key) while the field stays
 * required in tools/list, which shows it as `policyShape` (metadata is merged into the
 * JSON Schema).
 */
const { $schema: _dialect, ...policyJson } = z.toJSONSchema(policyShape, { io: 'input' });
const policy = z.preprocess((value) => value, z.unknown()).meta(policyJson);

export const admissionStatusInput = z.strictObject({ queue: queue.optional() });
export const setAdmissionPolicyInput = z.strictObject({ queue, policy });
export const clearAdmissionPolicyInput = z.strictObject({ queue });

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

export const admissionVerbs: Verb[] = [
  {
    name: 'admission_status',
    annotations: READS,
    description:
      "This endpoint's budgeted queues (or one): the policy, whether it admits now or defers (why, until when), " +
      'and the usage of the current window. Queues without a budget are not listed.',
    input: admissionStatusInput,
    output: z.object({ queues: z.array(queueStatusOut) }),
    async run(ctx, args) {
      const data = parseInput(admissionStatusInput, args);
      const queues = data.queue === undefined ? ctx.agent.queues : [granted(ctx, data.queue)];
      return { queues: await statuses({ db: ctx.todos.db }, ctx.endpoint.id, queues) };
    },
  },
  {
    name: 'set_admission_policy',
    annotations: SETTLES,
    description:
      "Set (fully replace) a granted queue's budget: at most max_in_flight claims at once and " +
      'max_claims_per_window claims per window. Every claim is charged, retries and takeovers included.',
    input: setAdmissionPolicyInput,
    output: queueStatusOut.extend({ created: z.boolean().describe('False when it replaced a budget.') }),
    async run(ctx, args) {
      const data = parseInput(setAdmissionPolicyInput, args);
      const name = granted(ctx, data.queue);
      return setPolicy({ db: ctx.todos.db }, actorOf(ctx), ctx.endpoint.id, name, data.policy, 'policy.');
    },
  },
  {
    name: 'clear_admission_policy',
    annotations: DESTROYS,
    description: "Remove a granted queue's budget: it is claimed as if it never had one, at once.",
    input: clearAdmissionPolicyInput,
    output: z.object({ queue: z.string(), deleted: z.literal(true) }),
    async run(ctx, args) {
      const data = parseInput(clearAdmissionPolicyInput, args);
      return clearPolicy({ db: ctx.todos.db }, actorOf(ctx), ctx.endpoint.id, granted(ctx, data.queue));
    },
  },
];
