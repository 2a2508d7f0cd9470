// The owner's verbs on a claimed todo: heartbeat, complete, fail, release. Only the
// session holding the claim may use them; anyone else gets conflict, whose message says
// whether it never held the todo or lost it (context.ts), and a todo outside the caller's
// endpoint or grant is not_found.

import { z } from 'zod';
import {
  errorText,
  leaseSeconds,
  parseInput,
  resolveLeaseSeconds,
  resultValue,
  todoId,
  type TodoSummary,
} from '../domain/todo.js';
import { DEFAULT_BACKOFF, RETRY_JITTER } from '../domain/backoff.js';
import { reopenQueue } from '../budgets/reopen.js';
import * as claims from '../store/claims.js';
import { zeroRowError, type Agent, type TodoDeps } from './context.js';

// The owner verbs' arguments, as tools/list shows them.
const result = resultValue.optional().describe('Any JSON value, at most 256 KiB.');
export const heartbeatInput = z.strictObject({ id: todoId, lease_seconds: leaseSeconds.optional() });
export const completeInput = z.strictObject({ id: todoId, result });
export const failInput = z.strictObject({
  id: todoId,
  error: errorText.optional().describe('What went wrong, for whoever looks next.'),
  result,
});
export const releaseInput = z.strictObject({ id: todoId });

/**
 * Runs the owner's statement; the verb's span (the active one) links to the todo's stored
 * trace context, which the statement returned (docs/design/tracing.md, "A todo's trace").
 */
async function owned<T extends TodoSummary & { traceparent: string | null }>(
  deps: TodoDeps,
  agent: Agent,
  todoId: string,
  verb: string,
  run: (args: claims.OwnedArgs) => Promise<T | null>,
): Promise<{ todo: Omit<T, 'traceparent'> }> {
  const row = await run({ endpointId: agent.endpointId, id: todoId, sessionId: agent.sessionId });
  if (row) {
    const { traceparent, ...todo } = row;
    deps.tracing?.linkActive(traceparent);
    return { todo };
  }
  throw await zeroRowError(deps, { endpointId: agent.endpointId, queues: agent.queues }, todoId, verb, agent.sessionId);
}

export async function heartbeat(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(heartbeatInput, input);
  const lease = resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds);
  return owned(deps, agent, data.id, 'heartbeat', (a) => claims.heartbeat(deps.db, { ...a, leaseSeconds: lease }));
}

export async function complete(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(completeInput, input);
  const done = await settle(deps, agent, data.id, 'complete', (a) =>
    claims.complete(deps.db, { ...a, result: data.result }),
  );
  deps.metrics?.todosCompleted.inc();
  return done;
}

export async function fail(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(failInput, input);
  const failed = await settle(deps, agent, data.id, 'fail', (a) =>
    claims.fail(deps.db, {
      ...a,
      error: data.error ?? null,
      result: data.result,
      backoff: DEFAULT_BACKOFF,
      jitter: RETRY_JITTER,
    }),
  );
  deps.metrics?.todosFailed.inc();
  if (failed.todo.state === 'failed' && failed.todo.next_retry_at === null) deps.metrics?.todosDeadLettered.inc();
  return failed;
}

export async function release(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(releaseInput, input);
  const released = await settle(deps, agent, data.id, 'release', (a) => claims.release(deps.db, a));
  deps.metrics?.todosReleased.inc();
  return released;
}

const OUTCOMES = { complete: 'done', fail: 'failed', release: 'released' } as const;

/**
 * Settles the claim with `run` (complete, fail, release), then observes how long it ran
 * (switchboard_run_seconds, after the statement committed) and tells the doorbell the
 * session may be idle (docs/design/doorbell-acknowledgement.md, "Who is rung"). A settled claim a policy
 * admitted may free its queue's slot: reopen it now if it owes a push
 * (docs/design/admission.md, "Doorbell gating and the reopen").
 */
async function settle(
  deps: TodoDeps,
  agent: Agent,
  todoId: string,
  verb: keyof typeof OUTCOMES,
  run: (args: claims.OwnedArgs) => Promise<claims.SettledTodo | null>,
): Promise<{ todo: TodoSummary }> {
  const { todo: row } = await owned(deps, agent, todoId, verb, run);
  const { under_policy: underPolicy, run_seconds: runSeconds, ...todo } = row;
  const { metrics } = deps;
  if (metrics && agent.endpointSlug !== undefined) {
    metrics.latency.run.observe(
      {
        endpoint: metrics.endpointLabel(agent.endpointSlug),
        queue: metrics.queueLabel(todo.queue),
        outcome: OUTCOMES[verb],
      },
      runSeconds,
    );
  }
  if (underPolicy) await reopenQueue(deps.db, todo.endpoint_id, todo.queue);
  deps.settled?.(todo.endpoint_id, agent.sessionId);
  return { todo };
}
