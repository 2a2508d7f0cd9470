// claim and claim_next: take a todo under a lease. The lease length is per call >
// endpoint default > server default. A claim that finds nothing is a value
// ({empty: true}), not an error; a named todo that cannot be claimed is classified.
// The claim itself (statements, admission, retries) is ./claim-loop.ts; the answer, the
// errors and the counters are ./admission.ts.

import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { leaseSeconds, parseInput, QUEUE_NAME, resolveLeaseSeconds, type Todo } from '../domain/todo.js';
import {
  admitted,
  countRefusals,
  deferredError,
  deferredSummary,
  type AdmissionUsage,
  type DeferredEntry,
} from './admission.js';
import { admitById, admitNext } from './claim-loop.js';
import { claimSelfTestTodo } from '../doorbell/ack.js';
import { zeroRowError, type Agent, type TodoDeps } from './context.js';

export const claimInput = z.strictObject({
  // At most 64 UTF-16 code units, as zod 3 counted (zod 4's `.max()` counts code points).
  id: z
    .string()
    .min(1)
    .refine((id) => id.length <= 64, 'String must contain at most 64 character(s)')
    .describe('The todo id, `td_…`.'),
  lease_seconds: leaseSeconds.optional(),
});
export const claimNextInput = z.strictObject({
  queue: z
    .string()
    .regex(QUEUE_NAME, 'must be a queue name')
    .optional()
    .describe('A queue name granted to this endpoint, e.g. `inbox`.'),
  lease_seconds: leaseSeconds.optional(),
});

export interface ClaimResult {
  todo: Todo;
  /** Headroom after this claim; only on a queue with an admission policy (docs/design/admission.md). */
  admission?: AdmissionUsage;
}

export async function claim(deps: TodoDeps, agent: Agent, input: unknown): Promise<ClaimResult> {
  const data = parseInput(claimInput, input);
  const out = await admitById(deps.db, {
    endpointId: agent.endpointId,
    queues: agent.queues,
    sessionId: agent.sessionId,
    leaseSeconds: resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds),
    id: data.id,
  });
  if (out.claimed) return admitted(deps, out.claimed);
  if (out.refused) throw deferredError(deps, out.refused);
  const selfTest = await claimSelfTestTodo(deps, agent, data.id);
  if (selfTest) return selfTest;
  throw await zeroRowError(deps, { endpointId: agent.endpointId, queues: agent.queues }, data.id, 'claim');
}

export type ClaimNextResult = ClaimResult | { empty: true; deferred?: DeferredEntry[] };

export async function claimNext(deps: TodoDeps, agent: Agent, input: unknown): Promise<ClaimNextResult> {
  const data = parseInput(claimNextInput, input ?? {});
  if (data.queue !== undefined && !agent.queues.includes(data.queue)) {
    throw new AppError('forbidden', `queue: "${data.queue}" is not one of this endpoint's granted queues`, {
      field: 'queue',
      granted: agent.queues,
    });
  }
  const out = await admitNext(deps.db, {
    endpointId: agent.endpointId,
    queues: data.queue === undefined ? agent.queues : [data.queue],
    sessionId: agent.sessionId,
    leaseSeconds: resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds),
  });
  countRefusals(deps, out.refused);
  if (out.claimed) return admitted(deps, out.claimed);
  const deferred = await deferredSummary(deps, agent.endpointId, out.refused);
  return deferred.length > 0 ? { empty: true, deferred } : { empty: true };
}
