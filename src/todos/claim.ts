// claim and claim_next: take a todo under a lease. The lease length is per call >
// endpoint default > server default. A claim that finds nothing is a value
// ({empty: true}), not an error; a named todo that cannot be claimed is classified.

import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { leaseSeconds, parseInput, QUEUE_NAME, resolveLeaseSeconds, type Todo } from '../domain/todo.js';
import { claimById, claimNext as claimNextRow, type ClaimedTodo } from '../store/claims.js';
import { zeroRowError, type Agent, type TodoDeps } from './context.js';

const claimInput = z.object({ id: z.string().min(1).max(64), lease_seconds: leaseSeconds.optional() }).strict();
const claimNextInput = z
  .object({
    queue: z.string().regex(QUEUE_NAME, 'must be a queue name').optional(),
    lease_seconds: leaseSeconds.optional(),
  })
  .strict();

/** A committed claim: counted (a takeover also ends a lapsed lease), answered without the flag. */
function claimed(deps: TodoDeps, row: ClaimedTodo): Todo {
  const { taken_over: takenOver, ...todo } = row;
  if (deps.metrics) {
    deps.metrics.todosClaimed.inc({ queue: deps.metrics.queueLabel(todo.queue) });
    deps.metrics.todoAttempts.inc();
    if (takenOver > 0) deps.metrics.leaseExpirations.inc();
  }
  return todo;
}

export interface ClaimResult {
  todo: Todo;
}

export async function claim(deps: TodoDeps, agent: Agent, input: unknown): Promise<ClaimResult> {
  const data = parseInput(claimInput, input);
  const row = await claimById(deps.db, {
    endpointId: agent.endpointId,
    queues: agent.queues,
    sessionId: agent.sessionId,
    leaseSeconds: resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds),
    id: data.id,
  });
  if (!row) throw await zeroRowError(deps, { endpointId: agent.endpointId, queues: agent.queues }, data.id, 'claim');
  return { todo: claimed(deps, row) };
}

export type ClaimNextResult = ClaimResult | { empty: true };

export async function claimNext(deps: TodoDeps, agent: Agent, input: unknown): Promise<ClaimNextResult> {
  const data = parseInput(claimNextInput, input ?? {});
  if (data.queue !== undefined && !agent.queues.includes(data.queue)) {
    throw new AppError('forbidden', `queue: "${data.queue}" is not one of this endpoint's granted queues`, {
      field: 'queue',
      granted: agent.queues,
    });
  }
  const row = await claimNextRow(deps.db, {
    endpointId: agent.endpointId,
    queues: data.queue === undefined ? agent.queues : [data.queue],
    sessionId: agent.sessionId,
    leaseSeconds: resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds),
  });
  if (!row) return { empty: true };
  return { todo: claimed(deps, row) };
}
