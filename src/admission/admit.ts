// The pure half of a budgeted claim (docs/design/admission.md, "How the claim path does
// it"). Before the admit statement: each probed policy's window bounds at the probe's
// instant, on its zone's wall clock (src/admission/window.ts); a policy whose zone is
// unknown is refused there and then (admission_unavailable: fail closed, nothing locked
// or charged). After it: what admission_admit()'s answer means — claimed (with the
// headroom to report), refused (with the reason, from the same counters), or stale (a
// policy changed or a window boundary passed since the probe). The decision is SQL's;
// decide() names it. Reads and writes nothing: the loop is src/todos/claim-loop.ts.

import { Temporal } from 'temporal-polyfill';
import type { AdmitAnswer, PolicyRow } from '../domain/admission.js';
import { isAppError } from '../domain/errors.js';
import { decide, headroom, windowOf, type Decision, type Usage } from './policy.js';
import { windowBounds } from './window.js';

export type Refused = {
  kind: 'refused';
  policyId: string;
  queue: string;
  decision: Extract<Decision, { admit: false }>;
};

/** A policy as the probe read it, with the window bounds of the probe's instant. */
export interface Probed {
  row: PolicyRow;
  /** updated_at as the database wrote it: a Date would cut the microseconds. */
  updatedAt: string;
  bounds: { start: Date; next: Date } | null;
}

/**
 * The probe's policies by queue, with their bounds; a policy whose zone is unknown is a
 * refusal right away (admission_unavailable: fail closed, nothing locked or charged).
 */
export function probed(rows: Array<{ row: PolicyRow; updatedAt: string; probedAt: Date }>): {
  policies: Map<string, Probed>;
  refused: Refused[];
} {
  const policies = new Map<string, Probed>();
  const refused: Refused[] = [];
  for (const { row, updatedAt, probedAt: at } of rows) {
    try {
      policies.set(row.queue, { row, updatedAt, bounds: boundsOf(row, at) });
    } catch (err) {
      if (!isAppError(err, 'admission_unavailable')) throw err;
      const decision = decide(row, { inFlight: 0, latestWindow: null, earliestLeaseExpiry: null }, at);
      if (!decision.admit) refused.push({ kind: 'refused', policyId: row.id, queue: row.queue, decision });
    }
  }
  return { policies, refused };
}

function boundsOf(row: PolicyRow, at: Date): Probed['bounds'] {
  const spec = windowOf(row);
  if (!spec || row.max_claims_per_window === null) return null;
  const b = windowBounds(spec, Temporal.Instant.fromEpochMilliseconds(at.getTime()));
  return { start: new Date(b.start.epochMilliseconds), next: new Date(b.next.epochMilliseconds) };
}

export type Verdict =
  | { kind: 'claimed'; admission: Usage | null; charged: boolean }
  /** A policy was created, changed or deleted, or a window boundary passed, since the probe. */
  | { kind: 'stale' }
  | Refused;

/**
 * What an admit statement's answer means. `claimedQueue` is the claimed todo's queue, or
 * null when the statement claimed nothing (a refusal row, which names its queue).
 */
export function verdict(policies: Map<string, Probed>, answer: AdmitAnswer, claimedQueue: string | null): Verdict {
  if (answer.o_stale) return { kind: 'stale' };
  const policy = policies.get(claimedQueue ?? answer.picked_queue ?? '');
  if (!policy) {
    // A queue the probe saw no policy on was admitted uncharged; a refusal always names a probed queue.
    if (claimedQueue === null) return { kind: 'stale' };
    return { kind: 'claimed', admission: null, charged: false };
  }
  const counters = {
    inFlight: answer.o_in_flight,
    latestWindow: policy.bounds ? { start: policy.bounds.start, used: answer.o_used } : null,
    earliestLeaseExpiry: answer.o_earliest_lease ? new Date(answer.o_earliest_lease) : null,
  };
  const decision = decide(policy.row, counters, new Date(answer.o_at));
  if (!answer.o_admitted || claimedQueue === null) {
    if (decision.admit) return { kind: 'stale' };
    return { kind: 'refused', policyId: policy.row.id, queue: answer.picked_queue ?? '', decision };
  }
  return {
    kind: 'claimed',
    admission: decision.admit ? headroom(decision) : null,
    charged: policy.bounds !== null,
  };
}
