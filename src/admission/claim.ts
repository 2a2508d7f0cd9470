// Claims under admission (seed 000): claim_next's loop over the granted queues and the
// claim of one named todo. The first attempt is the claim statement alone, outside any
// transaction: for a queue without a policy it claims the row (today's SQL plus one
// indexed miss), and only a candidate on a budgeted queue leads to the transactional
// path (src/store/admission-claims.ts). A refused queue is excluded and the loop goes on,
// so claim_next never answers empty while another granted queue has admissible work;
// each refusal removes a queue, so the loop is bounded by the number of granted queues.

import type { Queryable } from '../db/pool.js';
import { claimById, claimNext, type ClaimArgs, type ClaimedTodo } from '../store/claims.js';
import { admitOnce, claimedTodo, inTransaction, type Admitted } from '../store/admission-claims.js';
import { markHeld } from '../store/admission.js';
import type { Usage } from './policy.js';

export type Claimed = { todo: ClaimedTodo; admission: Usage | null; charged: boolean };
export type Refusal = Extract<Admitted, { kind: 'refused' }>;

export type NextOutcome = { claimed: Claimed; refused: Refusal[] } | { claimed: null; refused: Refusal[] };

/** The oldest admissible todo over `queues`; the refusals met on the way, for the deferred summary. */
export async function admitNext(db: Queryable, args: ClaimArgs): Promise<NextOutcome> {
  const first = await claimNext(db, args);
  if (!first) return { claimed: null, refused: [] };
  if (first.policy_id === null)
    return { claimed: { todo: claimedTodo(first), admission: null, charged: false }, refused: [] };
  const refused: Refusal[] = [];
  let queues = args.queues;
  while (queues.length > 0) {
    const current = { ...args, queues };
    const out = await inTransaction(db, (tx) => admitOnce(tx, current, (t) => claimNext(t, current)));
    if (out.kind === 'claimed') return { claimed: out, refused: await held(db, refused) };
    if (out.kind === 'none') break;
    refused.push(out);
    queues = queues.filter((q) => q !== out.queue);
  }
  return { claimed: null, refused: await held(db, refused) };
}

export type ByIdOutcome = { claimed: Claimed } | { claimed: null; refused: Refusal | null };

/** One named todo: claimed, refused by its queue's policy, or not claimable (refused null). */
export async function admitById(db: Queryable, args: ClaimArgs & { id: string }): Promise<ByIdOutcome> {
  const first = await claimById(db, args);
  if (!first) return { claimed: null, refused: null };
  if (first.policy_id === null) return { claimed: { todo: claimedTodo(first), admission: null, charged: false } };
  const out = await inTransaction(db, (tx) => admitOnce(tx, args, (t) => claimById(t, args)));
  if (out.kind === 'claimed') return { claimed: out };
  if (out.kind === 'none') return { claimed: null, refused: null };
  await held(db, [out]);
  return { claimed: null, refused: out };
}

/** Refused work is held back without a push: the reopen owes one when the queue admits again. */
async function held(db: Queryable, refused: Refusal[]): Promise<Refusal[]> {
  await markHeld(
    db,
    refused.map((r) => r.policyId),
  );
  return refused;
}
