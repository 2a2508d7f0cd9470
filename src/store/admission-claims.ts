// The admission half of a claim (seed 000, "The claim, with admission"). A claim
// statement that meets a policy on its candidate's queue (the probe) claims nothing and
// returns the policy; this module then computes the window bounds on the zone's wall
// clock (src/admission/window.ts) and runs the admit statement: one statement that locks
// a todo, then the policy (admission_admit(), 0005_admission.sql), reads the in-flight
// count and window counter with fresh snapshots, decides, charges and claims. Queues
// without a policy never come here.

import { Temporal } from 'temporal-polyfill';
import type { Queryable } from '../db/pool.js';
import { decide, headroom, type Decision, type PolicyRow, type Usage } from '../admission/policy.js';
import { windowBounds, type WindowSpec } from '../admission/window.js';
import { windowOf } from '../admission/policy.js';
import { isAppError } from '../domain/errors.js';
import { CLAIMABLE } from './todo-sql.js';
import { claimSql, type AdmitAnswer, type ClaimArgs, type ClaimedTodo, type ClaimRow } from './claims.js';

export { inTransaction } from './admission-tx.js';

export type Admitted =
  | { kind: 'claimed'; todo: ClaimedTodo; admission: Usage | null; charged: boolean }
  | { kind: 'none' }
  /** The policy changed or a window boundary passed between the probe and the decision. */
  | { kind: 'stale' }
  | { kind: 'refused'; policyId: string; queue: string; decision: Extract<Decision, { admit: false }> };

/** A claim statement's row as a todo: the admission columns dropped. */
export function claimedTodo(row: ClaimRow): ClaimedTodo {
  const {
    policy_id: _p,
    picked_id: _i,
    picked_queue: _q,
    policy: _pol,
    admission: _a,
    ...todo
  } = row as ClaimRow & ClaimedTodo;
  return todo as ClaimedTodo;
}

const ADMIT_NEXT = claimSql(
  `SELECT t.endpoint_id, t.id, t.claims, t.queue FROM todos t
    WHERE t.endpoint_id = $1 AND t.queue = ($2::text[])[1] AND ($5::text IS NULL OR t.id = $5) AND ${CLAIMABLE}
    ORDER BY t.ready_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
  'admit',
);
const ADMIT_BY_ID = claimSql(
  `SELECT t.endpoint_id, t.id, t.claims, t.queue FROM todos t
    WHERE t.endpoint_id = $1 AND t.queue = ANY($2::text[]) AND t.id = $5 AND ${CLAIMABLE}
    FOR UPDATE`,
  'admit',
);

/** The policy row a probe returned (to_jsonb of admission_policies, plus probed_at). */
function policyOf(json: Record<string, unknown>): PolicyRow & { probed_at: Date } {
  const date = (v: unknown) => new Date(String(v));
  return {
    ...(json as unknown as PolicyRow),
    created_at: date(json.created_at),
    updated_at: date(json.updated_at),
    probed_at: date(json.probed_at),
  };
}

type Bounds = { start: Date; next: Date } | null;

function boundsAt(spec: WindowSpec | null, limited: boolean, at: Date): Bounds {
  if (!spec || !limited) return null;
  const b = windowBounds(spec, Temporal.Instant.fromEpochMilliseconds(at.getTime()));
  return { start: new Date(b.start.epochMilliseconds), next: new Date(b.next.epochMilliseconds) };
}

/**
 * Admits one candidate of the probed policy's queue: claim_next re-picks the oldest
 * claimable row of that queue (`id` unset), claim takes the named one. The policy's
 * decision is authoritative in SQL; decide() names the reason from the same counters.
 */
export async function admit(
  db: Queryable,
  args: ClaimArgs & { id?: string },
  probe: { policy: Record<string, unknown>; queue: string },
): Promise<Admitted> {
  const policy = policyOf(probe.policy);
  const refuse = (decision: Decision): Admitted =>
    decision.admit ? { kind: 'stale' } : { kind: 'refused', policyId: policy.id, queue: probe.queue, decision };
  let bounds: Bounds;
  try {
    bounds = boundsAt(windowOf(policy), policy.max_claims_per_window !== null, policy.probed_at);
  } catch (err) {
    if (!isAppError(err, 'admission_unavailable')) throw err;
    return refuse(decide(policy, { inFlight: 0, latestWindow: null, earliestLeaseExpiry: null }, policy.probed_at));
  }
  const byId = args.id !== undefined;
  const res = await db.query<ClaimRow>({
    name: byId ? 'admit_by_id' : 'admit_next',
    text: byId ? ADMIT_BY_ID : ADMIT_NEXT,
    values: [
      args.endpointId,
      byId ? args.queues : [probe.queue],
      args.sessionId,
      args.leaseSeconds,
      args.id ?? null,
      // The exact text: a Date would cut microseconds and never match the row.
      String(probe.policy.updated_at),
      bounds?.start ?? null,
      bounds?.next ?? null,
    ],
  });
  const row = res.rows[0];
  const answer = row?.admission;
  if (!row || !answer) return { kind: 'none' };
  if (answer.o_stale) return { kind: 'stale' };
  const at = new Date(answer.o_at);
  const counters = {
    inFlight: answer.o_in_flight,
    latestWindow: bounds ? { start: bounds.start, used: answer.o_used } : null,
    earliestLeaseExpiry: answer.o_earliest_lease ? new Date(answer.o_earliest_lease) : null,
  };
  const decision = decide(policy, counters, at);
  if (!answer.o_admitted) return refuse(decision);
  const usage = decision.admit ? headroom(decision) : null;
  return { kind: 'claimed', todo: claimedTodo(row), admission: usage, charged: bounds !== null };
}

export type { AdmitAnswer };
