// Acknowledgement (docs/design/doorbell-acknowledgement.md, "What counts as heard"): a
// claim is the acknowledgement, written by the claim statement itself
// (src/store/claims.ts), so it costs the agent nothing; ack_doorbell covers what a claim
// cannot (a digest, a busy worker that heard but will not take the work, a triage
// policy). The self-test's synthetic todo is claimed here too, by id only, and completes
// at once. Counters move after the transaction commits; late acks move none.

import { z } from 'zod';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { notFound } from '../domain/errors.js';
import { maxLength } from '../domain/issues.js';
import { parseInput, type Todo } from '../domain/todo.js';
import type { Metrics } from '../metrics/index.js';
import { ackRing, ackRingsForClaim, type AckState, type RingOutcome } from '../store/doorbell-rings.js';
import { claimSyntheticById, isPendingSynthetic, testOfTodo } from '../store/doorbell-tests.js';
import { freezeTest } from './self-test-report.js';

interface Deps {
  db: Queryable;
  metrics?: Metrics;
}

interface Claimer {
  endpointId: string;
  sessionId: string;
  queues: string[];
}

/** What a synthetic todo's claim completes it with. */
export const NO_WORK_RESULT = {
  doorbell_self_test: true,
  note: 'This was a doorbell self-test: no work was needed, and the claim completed it.',
};

function countAcks(metrics: Metrics | undefined, rings: RingOutcome[], via: 'claim' | 'ack'): void {
  if (metrics && rings.length > 0) metrics.doorbell.acked(rings, via);
}

/**
 * The self-test's claim by id: completes the synthetic todo, acknowledges its ring and
 * freezes the test as `pass` (or, past its deadline, as expiry decides). Null when `id`
 * is not a pending synthetic todo of this caller, so the caller classifies as usual.
 */
export async function claimSelfTestTodo(deps: Deps, who: Claimer, id: string): Promise<{ todo: Todo } | null> {
  // A failed claim of a real todo pays one indexed read here, not a transaction.
  if (!(await isPendingSynthetic(deps.db, who.endpointId, id))) return null;
  return inTransaction(deps.db, async (tx) => {
    const todo = await claimSyntheticById(tx, { ...who, id, result: NO_WORK_RESULT });
    if (!todo) return null;
    await ackRingsForClaim(tx, { endpointId: who.endpointId, todoId: todo.id, sessionId: who.sessionId });
    const test = await testOfTodo(tx, who.endpointId, todo.id);
    if (test && !test.report) {
      await freezeTest(tx, test, test.expired ? 'expiry' : 'pass', todo.claimed_at ?? undefined);
    }
    return { todo };
  });
}

/** ack_doorbell's arguments, as tools/list shows them. */
export const ackDoorbellInput = z.strictObject({
  ring_id: z.string().min(1).check(maxLength(64)).describe('meta.ring_id of the doorbell, `rg_…`.'),
});

/** ack_doorbell: idempotent; a ring of another endpoint is not_found, exactly like an unknown one. */
export async function ackDoorbell(
  deps: Deps,
  who: { endpointId: string; sessionId: string },
  input: unknown,
): Promise<{ ring_id: string; state: 'acknowledged'; late: boolean; already: boolean }> {
  const { ring_id: ringId } = parseInput(ackDoorbellInput, input);
  const acked = await ackRing(deps.db, { endpointId: who.endpointId, ringId, sessionId: who.sessionId });
  if (!acked) throw notFound('doorbell ring', ringId);
  if (acked.outcome) countAcks(deps.metrics, [acked.outcome], 'ack');
  const state: AckState = acked.state;
  return {
    ring_id: ringId,
    state: 'acknowledged',
    late: state === 'acknowledged_late',
    already: state === 'already_acknowledged',
  };
}
