// The shapes admission control shares between the store, which reads them, and the pure
// admission code, which decides on them (docs/design/admission.md, "How the claim path
// does it"): a policy row, a policy read with its counters, the counters decide() takes,
// and the answer of admission_admit(). Pure: types and one mapping, nothing else.

/** A policy row as the store reads it. */
export interface PolicyRow {
  id: string;
  endpoint_id: string;
  queue: string;
  max_in_flight: number | null;
  max_claims_per_window: number | null;
  window_period: string | null;
  window_tz: string | null;
  window_start: string | null;
  window_weekday: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A policy with everything a status needs, read at one instant (`at`, the database clock). */
export type PolicyState = PolicyRow & {
  at: Date;
  in_flight: number;
  earliest_lease: Date | null;
  latest_start: Date | null;
  latest_used: number | null;
  pending: number;
  held_at: Date | null;
};

export interface Counters {
  /** Claimed rows of the queue, not counting the candidate itself (a takeover replaces its own claim). */
  inFlight: number;
  /** The latest window row of the policy, or null; only counts when it is the current window. */
  latestWindow: { start: Date; used: number } | null;
  /** The earliest lease expiry among the claimed rows: when an in-flight slot frees at the latest. */
  earliestLeaseExpiry: Date | null;
}

/** admission_admit()'s answer (0005_admission.sql), as the admit statement returns it. */
export interface AdmitAnswer {
  o_admitted: boolean;
  o_stale: boolean;
  o_policy_id: string | null;
  o_at: string;
  o_in_flight: number;
  o_used: number;
  o_earliest_lease: string | null;
  /** Set on a refusal (no todo columns): the queue of the todo the policy refused. */
  picked_queue?: string;
}

/** A policy state's counters, as decide() takes them. */
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

/** Why a budget holds work back (docs/design/admission.md). */
export type DeferReason = 'window_exhausted' | 'in_flight_full' | 'paused' | 'admission_unavailable';

export interface Usage {
  max_in_flight: number | null;
  in_flight: number;
  max_claims_per_window: number | null;
  used: number;
  remaining: number | null;
  window_resets_at: string | null;
}
