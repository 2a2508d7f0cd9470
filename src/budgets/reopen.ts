// The reopen (docs/design/admission.md, "Doorbell gating and the reopen"): work a budget
// held back got no push, so when its queue admits again — the window rolled over, an
// in-flight slot freed, the policy changed — exactly one todo_ready goes out for that
// endpoint and queue, which drives the doorbell through its existing path. The held mark's
// conditional clear (store) makes it one, whichever instance or trigger comes first;
// whether the queue admits is the pure status (src/admission/status.ts).

import type { Queryable } from '../db/pool.js';
import { statusOf } from '../admission/status.js';
import type { PolicyState } from '../domain/admission.js';
import { heldPolicyOf, heldPolicyStates, markHeld, reopenPolicy } from '../store/admission.js';

/** Policies looked at per sweep tick; the rest wait for the next tick (30 s). */
const SWEEP_LIMIT = 500;

async function reopenIfAdmissible(db: Queryable, state: PolicyState): Promise<boolean> {
  if (statusOf(state).status.state !== 'admissible') return false;
  return reopenPolicy(db, state.id);
}

/** After a policy write, or the complete, fail or release of a claim a policy admitted: reopen the queue now if it owes a push. */
export async function reopenQueue(db: Queryable, endpointId: string, queue: string): Promise<boolean> {
  const state = await heldPolicyOf(db, endpointId, queue);
  return state ? reopenIfAdmissible(db, state) : false;
}

/**
 * Marks these policies held (their work got no push), then reopens at once any newly
 * marked queue that admits again. The caller decided "held" on an earlier read; a slot
 * that freed between that read and the mark found no mark to clear, and the push it owed
 * would have waited for the sweep. A settle frees first and reads the mark after; this
 * marks first and reads the status after: each runs as its own committed statement, so
 * one of the two sees the other's write.
 */
export async function holdPolicies(db: Queryable, holds: Array<{ policyId: string; until: string | null }>) {
  for (const marked of await markHeld(db, holds)) await reopenQueue(db, marked.endpoint_id, marked.queue);
}

/** The 30 s sweep: every held policy whose queue admits again gets its one push. */
export async function reopenHeld(db: Queryable): Promise<{ reopened: number }> {
  let reopened = 0;
  for (const state of await heldPolicyStates(db, SWEEP_LIMIT)) {
    if (await reopenIfAdmissible(db, state)) reopened += 1;
  }
  return { reopened };
}
