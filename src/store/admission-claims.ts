// The admission half of a claim (seed 000, "The claim, with admission"): for a candidate
// whose queue has a policy, one transaction locks the todo, then the policy row (the
// claim statement's own probe), reads the in-flight count and the window counter in a
// second statement (its snapshot is taken after the policy lock, so it sees every claim
// the previous lock holder committed), and then either claims the row and charges one
// unit of the window that contains the claim, or claims nothing. Queues without a
// policy never come here: the claim statement claims their rows itself.

import type { Queryable } from '../db/pool.js';
import { decide, headroom, type Counters, type Decision, type PolicyRow, type Usage } from '../admission/policy.js';
import { claimSql, type ClaimArgs, type ClaimedTodo, type ClaimRow } from './claims.js';
import { POLICY_COLUMNS } from './admission.js';
export { inTransaction } from './admission-tx.js';

export type Admitted =
  | { kind: 'claimed'; todo: ClaimedTodo; admission: Usage | null; charged: boolean }
  | { kind: 'none' }
  | {
      kind: 'refused';
      policyId: string;
      queue: string;
      decision: Extract<Decision, { admit: false }>;
    };

/** A claim statement's row as a todo: the admission columns dropped. */
export function claimedTodo(row: ClaimRow): ClaimedTodo {
  const { policy_id: _p, picked_id: _i, picked_queue: _q, ...todo } = row as ClaimRow & ClaimedTodo;
  return todo as ClaimedTodo;
}

// Read under the policy lock, in a statement of its own. clock_timestamp() is read after
// the snapshot, so every claim or completion this statement counts happened before the
// instant the new claim is stamped with: attempt intervals then never overlap by more
// than the cap, and the window charged is the window that contains claimed_at.
const COUNTERS = `
  SELECT ${POLICY_COLUMNS}, c.at, c.at::text AS at_exact,
    (SELECT count(*) FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue
        AND t.state = 'claimed' AND t.id <> $2) AS in_flight,
    (SELECT min(t.lease_expires_at) FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue
        AND t.state = 'claimed' AND t.id <> $2) AS earliest_lease,
    w.window_start AS latest_start, w.used AS latest_used
  FROM admission_policies p
  CROSS JOIN (SELECT clock_timestamp() AS at) c
  LEFT JOIN LATERAL (SELECT window_start, used FROM admission_windows
                      WHERE policy_id = p.id ORDER BY window_start DESC LIMIT 1) w ON true
  WHERE p.id = $1`;

type CountersRow = PolicyRow & {
  at: Date;
  /** `at` to the microsecond: a Date keeps milliseconds, and claimed_at must not precede what was counted. */
  at_exact: string;
  in_flight: number;
  earliest_lease: Date | null;
  latest_start: Date | null;
  latest_used: number | null;
};

export function countersOf(row: {
  in_flight: number;
  earliest_lease: Date | null;
  latest_start: Date | null;
  latest_used: number | null;
}): Counters {
  return {
    inFlight: row.in_flight,
    earliestLeaseExpiry: row.earliest_lease,
    latestWindow: row.latest_start ? { start: row.latest_start, used: row.latest_used ?? 0 } : null,
  };
}

// The admitted claim of the row this transaction already holds, stamped with the instant
// of the decision ($6), and its charge: one unit of the window starting at $8, if any.
const CLAIM_ADMITTED = claimSql(
  `SELECT t.endpoint_id, t.id, t.claims, t.queue FROM todos t
    WHERE t.endpoint_id = $1 AND t.queue = ANY($2::text[]) AND t.id = $5`,
  {
    gate: false,
    clock: '$6::timestamptz',
    extra: `,
    charged AS (
      INSERT INTO admission_windows (policy_id, window_start, used)
      SELECT $7::uuid, $8::timestamptz, 1 FROM claimed WHERE $8::timestamptz IS NOT NULL
      ON CONFLICT (policy_id, window_start) DO UPDATE SET used = admission_windows.used + 1, updated_at = now())`,
  },
);

/**
 * One admission attempt inside a transaction: `pick` runs a claim statement (which locks
 * the todo, then the policy); a row without a policy is already claimed; a budgeted one
 * is decided here and claimed and charged, or left alone.
 */
export async function admitOnce(
  tx: Queryable,
  args: ClaimArgs,
  pick: (tx: Queryable) => Promise<ClaimRow | null>,
): Promise<Admitted> {
  const row = await pick(tx);
  if (!row) return { kind: 'none' };
  if (row.policy_id === null) return { kind: 'claimed', todo: claimedTodo(row), admission: null, charged: false };
  const counters = await tx.query<CountersRow>({
    name: 'admission_counters',
    text: COUNTERS,
    values: [row.policy_id, row.picked_id],
  });
  const c = counters.rows[0];
  if (!c) return { kind: 'none' };
  const decision = decide(c, countersOf(c), c.at);
  if (!decision.admit) return { kind: 'refused', policyId: row.policy_id, queue: row.picked_queue, decision };
  const claimed = await tx.query<ClaimRow>({
    name: 'claim_admitted',
    text: CLAIM_ADMITTED,
    values: [
      args.endpointId,
      args.queues,
      args.sessionId,
      args.leaseSeconds,
      row.picked_id,
      c.at_exact,
      row.policy_id,
      decision.windowStart,
    ],
  });
  const todo = claimed.rows[0];
  if (!todo) return { kind: 'none' };
  return {
    kind: 'claimed',
    todo: claimedTodo(todo),
    admission: headroom(decision),
    charged: decision.windowStart !== null,
  };
}
