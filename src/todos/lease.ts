// The owner's verbs on a claimed todo: heartbeat, complete, fail, release. The holder
// is the claim's lease token when the call passes one (from any session of the endpoint,
// or none), else the session that claimed; anyone else gets conflict, whose message says
// whether it never held the todo or lost it (context.ts), and a todo outside the caller's
// endpoint or grant is not_found. complete, fail and release may leave a summary and an
// artifact on the attempt they end (docs/design/todos.md, "What an attempt leaves").

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
import { artifactArg, attemptNote, leaseTokenArg, summaryArg } from '../domain/attempts.js';
import * as claims from '../store/claims.js';
import { statements } from './coalesce.js';
import { zeroRowError, type Agent, type TodoDeps } from './context.js';

// The owner verbs' arguments, as tools/list shows them.
const result = resultValue.optional().describe('Any JSON value, at most 256 KiB.');
const lease_token = leaseTokenArg.optional();
const summary = summaryArg.optional();
export const heartbeatInput = z.strictObject({ id: todoId, lease_token, lease_seconds: leaseSeconds.optional() });
export const completeInput = z.strictObject({
  id: todoId,
  lease_token,
  result,
  summary,
  artifact: artifactArg.optional(),
});
export const failInput = z.strictObject({
  id: todoId,
  lease_token,
  error: errorText.optional().describe('What went wrong, for whoever looks next.'),
  result,
  summary,
  artifact: artifactArg.optional(),
  retry: z
    .boolean()
    .optional()
    .describe('false: do not retry, dead-letter it now (default: retried with backoff while attempts remain).'),
});
export const releaseInput = z.strictObject({ id: todoId, lease_token, summary });

/**
 * Runs the owner's statement; the verb's span (the active one) links to the todo's stored
 * trace context, which the statement returned (docs/design/tracing.md, "A todo's trace").
 */
async function owned<T extends TodoSummary & { traceparent: string | null }>(
  deps: TodoDeps,
  agent: Agent,
  target: Target,
  verb: string,
  run: (args: claims.OwnedArgs) => Promise<T | null>,
): Promise<{ todo: Omit<T, 'traceparent'> }> {
  const leaseToken = target.lease_token ?? null;
  const row = await run({ endpointId: agent.endpointId, id: target.id, sessionId: agent.sessionId, leaseToken });
  if (row) {
    const { traceparent, ...todo } = row;
    deps.tracing?.linkActive(traceparent);
    return { todo };
  }
  const holder = leaseToken === null ? { sessionId: agent.sessionId } : { leaseToken };
  throw await zeroRowError(deps, { endpointId: agent.endpointId, queues: agent.queues }, target.id, verb, holder);
}

/** The todo an owner verb names, and the lease token it passed, if any. */
interface Target {
  id: string;
  lease_token?: string | undefined;
}

export async function heartbeat(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(heartbeatInput, input);
  const lease = resolveLeaseSeconds(data.lease_seconds, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds);
  return owned(deps, agent, data, 'heartbeat', (a) =>
    statements(deps.db, deps.coalesce).heartbeat({ ...a, leaseSeconds: lease }),
  );
}

export async function complete(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(completeInput, input);
  const note = attemptNote(data.summary, data.artifact);
  const done = await settle(deps, agent, data, 'complete', (a) =>
    statements(deps.db, deps.coalesce).complete({ ...a, ...note, result: data.result }),
  );
  deps.metrics?.todosCompleted.inc();
  return done;
}

export async function fail(deps: TodoDeps, agent: Agent, input: unknown): Promise<{ todo: TodoSummary }> {
  const data = parseInput(failInput, input);
  const note = attemptNote(data.summary, data.artifact);
  const failed = await settle(deps, agent, data, 'fail', (a) =>
    statements(deps.db, deps.coalesce).fail({
      ...a,
      ...note,
      retry: data.retry ?? true,
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
  const note = attemptNote(data.summary, undefined);
  const released = await settle(deps, agent, data, 'release', (a) =>
    statements(deps.db, deps.coalesce).release({ ...a, ...note }),
  );
  deps.metrics?.todosReleased.inc();
  return released;
}

const OUTCOMES = { complete: 'done', fail: 'failed', release: 'released' } as const;

/**
 * Settles the claim with `run` (complete, fail, release), then observes how long it ran
 * (switchboard_run_seconds, after the statement committed) and tells the doorbell the
 * claiming session may be idle (docs/design/doorbell-acknowledgement.md, "Who is rung"). A settled claim a policy
 * admitted may free its queue's slot: reopen it now if it owes a push
 * (docs/design/admission.md, "Doorbell gating and the reopen").
 */
async function settle(
  deps: TodoDeps,
  agent: Agent,
  target: Target,
  verb: keyof typeof OUTCOMES,
  run: (args: claims.OwnedArgs) => Promise<claims.SettledTodo | null>,
): Promise<{ todo: TodoSummary }> {
  const { todo: row } = await owned(deps, agent, target, verb, run);
  const { under_policy: underPolicy, run_seconds: runSeconds, claimer, ...todo } = row;
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
  // The claimer may be idle now, whoever settled (a lease token may come from elsewhere).
  deps.settled?.(todo.endpoint_id, claimer ?? agent.sessionId);
  return { todo };
}
