// claim and claim_next: take a todo under a lease. The lease length is per call >
// endpoint default > server default. A claim that finds nothing is a value
// ({empty: true}), not an error; a named todo that cannot be claimed is classified.
// The claim itself (statements, admission, retries) is ./claim-loop.ts; the answer, the
// errors and the counters are ./admission.ts.

import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import {
  leaseSeconds,
  MAX_WAIT_SECONDS,
  parseInput,
  QUEUE_NAME,
  resolveLeaseSeconds,
  waitSeconds,
  type Todo,
} from '../domain/todo.js';
import {
  admitted,
  countRefusals,
  deferredError,
  deferredSummary,
  type AdmissionUsage,
  type DeferredEntry,
} from './admission.js';
import { admitById, admitNext } from './claim-loop.js';
import { statements } from './coalesce.js';
import { holdDeferred } from '../budgets/gate.js';
import { claimSelfTestTodo } from '../doorbell/ack.js';
import { keepAttempts, zeroRowError, type Agent, type TodoDeps } from './context.js';
import { release } from './lease.js';
import type { Waiting } from './waiters.js';
import type { PriorAttempt } from '../store/claims.js';
import type { TodoAnswer } from '../domain/asks.js';

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
  wait_seconds: waitSeconds
    .optional()
    .describe(
      `When nothing is claimable now, wait up to this many seconds (0–${MAX_WAIT_SECONDS}; default 0, answer at ` +
        'once) and claim the first todo that becomes ready; {"empty": true} if none did by then.',
    ),
});

export interface ClaimResult {
  todo: Todo;
  /**
   * The claim's lease token: heartbeat, complete, fail and release accept it from any
   * session of the endpoint or none (docs/design/todos.md, "Lease tokens"). Absent on a
   * self-test todo, which the claim itself completes.
   */
  lease_token?: string;
  /** What the attempts before this one left, newest first (at most 5). */
  prior_attempts?: PriorAttempt[];
  /** The todo's answered and timed-out questions to a human, oldest first (docs/design/ask-human.md). */
  answers?: TodoAnswer[];
  /** The question the last attempt asked timed out unanswered. */
  timed_out?: true;
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
    keepAttempts: keepAttempts(deps),
    id: data.id,
  });
  if (out.claimed) return admitted(deps, out.claimed, agent.endpointSlug);
  if (out.refused) throw deferredError(deps, out.refused);
  const selfTest = await claimSelfTestTodo(deps, agent, data.id);
  if (selfTest) return selfTest;
  throw await zeroRowError(deps, { endpointId: agent.endpointId, queues: agent.queues }, data.id, 'claim');
}

export type ClaimNextResult = ClaimResult | { empty: true; deferred?: DeferredEntry[] };

export async function claimNext(
  deps: TodoDeps,
  agent: Agent,
  input: unknown,
  waiting?: Waiting,
): Promise<ClaimNextResult> {
  const data = parseInput(claimNextInput, input ?? {});
  if (data.queue !== undefined && !agent.queues.includes(data.queue)) {
    throw new AppError('forbidden', `queue: "${data.queue}" is not one of this endpoint's granted queues`, {
      field: 'queue',
      granted: agent.queues,
    });
  }
  const queues = data.queue === undefined ? agent.queues : [data.queue];
  const once = () => claimNextOnce(deps, agent, queues, data.lease_seconds);
  if (!data.wait_seconds || !waiting) return once();
  const signal = waiting.signal?.();
  const result = await waiting.waiters.wait<ClaimNextResult>({
    verb: 'claim_next',
    endpointId: agent.endpointId,
    sessionId: agent.sessionId,
    queues,
    seconds: data.wait_seconds,
    signal,
    empty: { empty: true },
    attempt: async () => {
      const r = await once();
      if ('todo' in r) return { done: true, value: r, queue: r.todo.queue };
      // Which of its queues a budget holds back now, even with nothing pending on them
      // (the doorbell's own check): their pushes wake this waiter only with the reopen,
      // which the held mark set here makes owed.
      const held = new Set([
        ...(r.deferred ?? []).map((d) => d.queue),
        ...(await holdDeferred(deps.db, agent.endpointId)),
      ]);
      return { done: false, value: r, deferred: queues.filter((q) => held.has(q)) };
    },
  });
  // The caller went away while its claim ran: nobody will work the todo, so it goes back.
  if ('todo' in result && signal?.aborted) await giveBack(deps, agent, result.todo.id);
  return result;
}

async function giveBack(deps: TodoDeps, agent: Agent, id: string): Promise<void> {
  try {
    await release(deps, agent, { id });
  } catch {
    // Lost meanwhile (a takeover): it is not this session's to give back any more.
  }
}

async function claimNextOnce(
  deps: TodoDeps,
  agent: Agent,
  queues: string[],
  lease: number | undefined,
): Promise<ClaimNextResult> {
  const out = await admitNext(
    deps.db,
    {
      endpointId: agent.endpointId,
      queues,
      sessionId: agent.sessionId,
      leaseSeconds: resolveLeaseSeconds(lease, agent.defaultLeaseSeconds, deps.defaultLeaseSeconds),
      keepAttempts: keepAttempts(deps),
    },
    statements(deps.db, deps.coalesce).claimNext,
  );
  countRefusals(deps, out.refused);
  if (out.claimed) return admitted(deps, out.claimed, agent.endpointSlug);
  const deferred = await deferredSummary(deps, agent.endpointId, out.refused);
  return deferred.length > 0 ? { empty: true, deferred } : { empty: true };
}
