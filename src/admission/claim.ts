// Claims under admission (seed 000): claim_next's loop over the granted queues and the
// claim of one named todo. Each attempt is first the claim statement alone: for a queue
// without a policy it claims the row (today's SQL plus one indexed miss), and only a
// candidate on a budgeted queue goes on to the admit statement
// (src/store/admission-claims.ts). A refused queue is excluded and the loop goes on, so
// claim_next never answers empty while another granted queue has admissible work; each
// refusal removes a queue, so the loop is bounded by the number of granted queues (plus
// a few retries when a policy changes or a window boundary passes mid-claim).

import type { Queryable } from '../db/pool.js';
import { admit, claimedTodo, type Admitted } from '../store/admission-claims.js';
import { markHeld } from '../store/admission.js';
import { claimById, claimNext, type ClaimArgs, type ClaimedTodo, type ClaimRow } from '../store/claims.js';
import type { Usage } from './policy.js';

export type Claimed = { todo: ClaimedTodo; admission: Usage | null; charged: boolean };
export type Refusal = Extract<Admitted, { kind: 'refused' }>;

export type NextOutcome = { claimed: Claimed | null; refused: Refusal[] };

/** Retries of one candidate when its policy changed or a boundary passed mid-claim. */
const STALE_RETRIES = 3;

const plain = (row: ClaimRow): Claimed => ({ todo: claimedTodo(row), admission: null, charged: false });

/** The oldest admissible todo over `queues`; the refusals met on the way, for the deferred summary. */
export async function admitNext(db: Queryable, args: ClaimArgs): Promise<NextOutcome> {
  const refused: Refusal[] = [];
  let queues = args.queues;
  for (let stale = 0; queues.length > 0 && stale <= STALE_RETRIES;) {
    const current = { ...args, queues };
    const row = await claimNext(db, current);
    if (!row) break;
    if (row.policy_id === null) return { claimed: plain(row), refused: await held(db, refused) };
    const out = await admit(db, current, { policy: row.policy ?? {}, queue: row.picked_queue });
    if (out.kind === 'claimed') return { claimed: out, refused: await held(db, refused) };
    if (out.kind === 'refused') {
      refused.push(out);
      queues = queues.filter((q) => q !== out.queue);
    } else if (out.kind === 'stale' || out.kind === 'none') {
      stale += 1;
    }
  }
  return { claimed: null, refused: await held(db, refused) };
}

export type ByIdOutcome = { claimed: Claimed } | { claimed: null; refused: Refusal | null };

/** One named todo: claimed, refused by its queue's policy, or not claimable (refused null). */
export async function admitById(db: Queryable, args: ClaimArgs & { id: string }): Promise<ByIdOutcome> {
  for (let attempt = 0; attempt <= STALE_RETRIES; attempt++) {
    const row = await claimById(db, args);
    if (!row) return { claimed: null, refused: null };
    if (row.policy_id === null) return { claimed: plain(row) };
    const out = await admit(db, args, { policy: row.policy ?? {}, queue: row.picked_queue });
    if (out.kind === 'claimed') return { claimed: out };
    if (out.kind === 'none') return { claimed: null, refused: null };
    if (out.kind === 'refused') {
      await held(db, [out]);
      return { claimed: null, refused: out };
    }
  }
  return { claimed: null, refused: null };
}

/** Refused work is held back without a push: the reopen owes one when the queue admits again. */
async function held(db: Queryable, refused: Refusal[]): Promise<Refusal[]> {
  await markHeld(
    db,
    refused.map((r) => r.policyId),
  );
  return refused;
}
