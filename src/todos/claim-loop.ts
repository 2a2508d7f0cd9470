// Claims under admission (docs/design/admission.md, "How the claim path does it"):
// claim_next's loop over the granted queues and the claim of one named todo. The first
// statement is the claim statement itself (src/store/claims.ts): when no requested queue
// has a policy it claims the row (today's SQL plus one indexed miss). Otherwise it returns
// the queues' policies; the pure src/admission/admit.ts computes their window bounds, the
// admit statement (src/store/admission-claims.ts) picks, decides, charges and claims, and
// admit.ts reads its answer. A refused queue is excluded and the loop goes on, so
// claim_next never answers empty while another granted queue has admissible work; each
// refusal removes a queue, so the loop is bounded by the number of granted queues (plus a
// few re-reads when a policy changes or a window boundary passes mid-claim).

import { probed, verdict, type Probed, type Refused } from '../admission/admit.js';
import type { Usage } from '../admission/policy.js';
import type { Queryable } from '../db/pool.js';
import { admit, claimedTodo, probedPolicies } from '../store/admission-claims.js';
import { holdPolicies } from '../budgets/reopen.js';
import {
  anyClaimable,
  claimById,
  claimNext,
  type ClaimArgs,
  type ClaimedTodo,
  type ClaimRow,
} from '../store/claims.js';
import { getTodo } from '../store/todos.js';

export type Claimed = { todo: ClaimedTodo; admission: Usage | null; charged: boolean };
export type Refusal = Refused;
export type NextOutcome = { claimed: Claimed | null; refused: Refusal[] };

type Admitted = ({ kind: 'claimed' } & Claimed) | { kind: 'none' } | { kind: 'stale' } | Refused;

/** Re-reads of the policies when one changed or a window boundary passed mid-claim. */
const STALE_RETRIES = 3;

type Probe = { claimed: Claimed } | { claimed: null; policies: Map<string, Probed>; refused: Refusal[] } | null;

/** The claim statement's answer: a claim, the policies to admit against, or nothing. */
function readProbe(rows: ClaimRow[]): Probe {
  const first = rows[0];
  if (!first) return null;
  if (first.id !== null) return { claimed: { todo: claimedTodo(first), admission: null, charged: false } };
  return { claimed: null, ...probed(probedPolicies(rows)) };
}

/** One admit statement, and what its answer means. */
async function admitOnce(
  db: Queryable,
  args: ClaimArgs & { id?: string },
  policies: Map<string, Probed>,
): Promise<Admitted> {
  const out = await admit(db, args, policies);
  if (!out) return { kind: 'none' };
  const v = verdict(policies, out.answer, out.todo?.queue ?? null);
  if (v.kind !== 'claimed') return v;
  // verdict() answers `claimed` only for a claimed row (a non-null queue), so todo is set.
  return { kind: 'claimed', todo: out.todo as ClaimedTodo, admission: v.admission, charged: v.charged };
}

// Claim statements skip locked rows, and a doorbell pass on each instance locks up to a
// batch of a queue's pending todos while it rings them, so a claim can, for an instant,
// find every candidate locked. Then it looks again, a few times, a few milliseconds apart;
// each retry is taken only when a claimable row exists.
const LOCKED_RETRIES = 3;
const LOCKED_RETRY_MS = 5;

/** The claim statement's rows, tried again while every claimable candidate was locked by another. */
async function claimNextPastLocks(db: Queryable, args: ClaimArgs, run: ClaimNext): Promise<ClaimRow[]> {
  for (let attempt = 0; ; attempt++) {
    const rows = await run(args);
    if (rows.length > 0 || attempt >= LOCKED_RETRIES || !(await anyClaimable(db, args))) return rows;
    await new Promise((resolve) => setTimeout(resolve, LOCKED_RETRY_MS * (attempt + 1)));
  }
}

/** The claim_next statement: the store's, or the instance's coalesced lane (src/todos/coalesce.ts). */
export type ClaimNext = (args: ClaimArgs) => Promise<ClaimRow[]>;

/**
 * The oldest admissible todo over `queues`; the refusals met on the way, for the deferred
 * summary. `run` is the claim statement (default: the store's, on `db`).
 */
export async function admitNext(
  db: Queryable,
  args: ClaimArgs,
  run: ClaimNext = (a) => claimNext(db, a),
): Promise<NextOutcome> {
  // No policy on the requested queues (the common case): the claim statement's answer is
  // final, and nothing else runs.
  if (args.queues.length === 0) return { claimed: null, refused: [] };
  const first = readProbe(await claimNextPastLocks(db, args, run));
  if (first === null) return { claimed: null, refused: [] };
  if (first.claimed) return { claimed: first.claimed, refused: [] };
  return admitNextBudgeted(db, args, first, run);
}

/** claim_next over queues of which some have policies: admit statements until a claim or none admissible. */
async function admitNextBudgeted(
  db: Queryable,
  args: ClaimArgs,
  first: { policies: Map<string, Probed>; refused: Refusal[] },
  run: ClaimNext,
): Promise<NextOutcome> {
  const refused: Refusal[] = [...first.refused];
  const outcome = async (claimed: Claimed | null) => ({ claimed, refused: await held(db, refused) });
  let queues = args.queues.filter((q) => !first.refused.some((r) => r.queue === q));
  let policies: Map<string, Probed> | null = first.policies;
  let locked = 0;
  for (let stale = 0; queues.length > 0 && stale <= STALE_RETRIES;) {
    if (policies === null) {
      const probe = readProbe(await claimNextPastLocks(db, { ...args, queues }, run));
      if (!probe) break;
      if (probe.claimed) return outcome(probe.claimed);
      policies = probe.policies;
      refused.push(...probe.refused);
      queues = queues.filter((q) => !probe.refused.some((r) => r.queue === q));
      continue;
    }
    const out = await admitOnce(db, { ...args, queues }, policies);
    if (out.kind === 'claimed') return outcome(out);
    if (out.kind === 'none') {
      if (locked >= LOCKED_RETRIES || !(await anyClaimable(db, { ...args, queues }))) break;
      await new Promise((resolve) => setTimeout(resolve, LOCKED_RETRY_MS * ++locked));
      continue;
    }
    if (out.kind === 'refused') {
      refused.push(out);
      queues = queues.filter((q) => q !== out.queue);
    } else {
      stale += 1;
      policies = null;
    }
  }
  return outcome(null);
}

export type ByIdOutcome = { claimed: Claimed } | { claimed: null; refused: Refusal | null };

/** One named todo: claimed, refused by its queue's policy, or not claimable (refused null). */
export async function admitById(db: Queryable, args: ClaimArgs & { id: string }): Promise<ByIdOutcome> {
  for (let attempt = 0; attempt <= STALE_RETRIES; attempt++) {
    const probe = readProbe(await claimById(db, args));
    if (!probe) return { claimed: null, refused: null };
    if (probe.claimed) return { claimed: probe.claimed };
    // A queue whose zone is unknown refuses before any lock; which queue the todo is on
    // is only known once it is picked, so those queues are left out of this claim.
    const queues = args.queues.filter((q) => !probe.refused.some((r) => r.queue === q));
    const out = await admitOnce(db, { ...args, queues }, probe.policies);
    if (out.kind === 'claimed') return { claimed: out };
    if (out.kind === 'refused') return { claimed: null, refused: (await held(db, [out]))[0] ?? out };
    if (out.kind === 'none') {
      const unavailable = await refusedById(db, args, probe.refused);
      return { claimed: null, refused: unavailable };
    }
  }
  return { claimed: null, refused: null };
}

/** When the named todo is live on a queue whose zone is unknown, that refusal; else null. */
async function refusedById(db: Queryable, args: ClaimArgs & { id: string }, refused: Refusal[]) {
  for (const r of refused) {
    const todo = await getTodo(db, { endpointId: args.endpointId, queues: [r.queue] }, args.id);
    if (todo && (todo.state === 'pending' || todo.state === 'failed' || todo.state === 'claimed')) {
      return (await held(db, [r]))[0] ?? r;
    }
  }
  return null;
}

/** Refused work is held back without a push: the reopen owes one when the queue admits again. */
async function held(db: Queryable, refused: Refusal[]): Promise<Refusal[]> {
  await holdPolicies(
    db,
    refused.map((r) => ({ policyId: r.policyId, until: r.decision.exact ? r.decision.next_eligible_at : null })),
  );
  return refused;
}
