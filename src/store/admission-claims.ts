// The admission half of a claim (docs/design/admission.md, "How the claim path does it").
// When the claim statement's probe meets policies on the requested queues it claims
// nothing and returns them; this module computes each one's window bounds on its zone's
// wall clock (src/admission/window.ts) and runs the admit statement: one statement that
// picks and locks a todo, then its queue's policy (admission_admit(), 0005_admission.sql),
// reads the in-flight count and window counter with fresh snapshots, decides, charges and
// claims. Endpoints without policies on the requested queues never come here.

import { Temporal } from 'temporal-polyfill';
import type { Queryable } from '../db/pool.js';
import { decide, headroom, windowOf, type Decision, type PolicyRow, type Usage } from '../admission/policy.js';
import { windowBounds } from '../admission/window.js';
import { isAppError } from '../domain/errors.js';
import {
  byIdSql,
  nextSql,
  type AdmitAnswer,
  type ClaimArgs,
  type ClaimedTodo,
  type ClaimRow,
  type ProbedPolicy,
} from './claims.js';

export type Refused = {
  kind: 'refused';
  policyId: string;
  queue: string;
  decision: Extract<Decision, { admit: false }>;
};

export type Admitted =
  | { kind: 'claimed'; todo: ClaimedTodo; admission: Usage | null; charged: boolean }
  | { kind: 'none' }
  /** A policy was created, changed or deleted, or a window boundary passed, since the probe. */
  | { kind: 'stale' }
  | Refused;

/**
 * A claim statement's claimed row as a todo: its `admission` column dropped. That column
 * is the row's last property, and deleting the last-added property keeps the object's
 * fast shape, so the hot path neither copies the row nor slows later reads of it.
 */
export function claimedTodo(row: ClaimedTodo & { admission?: unknown }): ClaimedTodo {
  delete row.admission;
  return row;
}

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
export function probed(rows: ClaimRow[]): { policies: Map<string, Probed>; refused: Refused[] } {
  const policies = new Map<string, Probed>();
  const refused: Refused[] = [];
  for (const r of rows) {
    if (r.id !== null || !r.admission || !('probed_at' in r.admission)) continue;
    const json: ProbedPolicy = r.admission;
    const row = {
      ...(json as unknown as PolicyRow),
      created_at: date(json.created_at),
      updated_at: date(json.updated_at),
    };
    const at = date(json.probed_at);
    try {
      policies.set(json.queue, { row, updatedAt: String(json.updated_at), bounds: boundsOf(row, at) });
    } catch (err) {
      if (!isAppError(err, 'admission_unavailable')) throw err;
      const decision = decide(row, { inFlight: 0, latestWindow: null, earliestLeaseExpiry: null }, at);
      if (!decision.admit) refused.push({ kind: 'refused', policyId: row.id, queue: json.queue, decision });
    }
  }
  return { policies, refused };
}

const date = (v: unknown) => new Date(String(v));

function boundsOf(row: PolicyRow, at: Date): Probed['bounds'] {
  const spec = windowOf(row);
  if (!spec || row.max_claims_per_window === null) return null;
  const b = windowBounds(spec, Temporal.Instant.fromEpochMilliseconds(at.getTime()));
  return { start: new Date(b.start.epochMilliseconds), next: new Date(b.next.epochMilliseconds) };
}

const ADMIT_NEXT_ONE = nextSql('t.queue = ($2::text[])[1]', 'admit');
const ADMIT_NEXT_ANY = nextSql('t.queue = ANY($2::text[])', 'admit');
const ADMIT_BY_ID = byIdSql('admit');

/**
 * One admit statement over `args.queues` (claim_next) or the named todo (claim): the
 * picked todo is claimed uncharged when its queue has no policy, or admitted, charged and
 * claimed, or refused by its policy. The decision is SQL's; decide() names the reason
 * from the same counters.
 */
export async function admit(
  db: Queryable,
  args: ClaimArgs & { id?: string },
  policies: Map<string, Probed>,
): Promise<Admitted> {
  const list = [...policies.entries()];
  const byId = args.id !== undefined;
  const res = await db.query<ClaimRow>({
    name: byId ? 'admit_by_id' : args.queues.length === 1 ? 'admit_next_one' : 'admit_next_any',
    text: byId ? ADMIT_BY_ID : args.queues.length === 1 ? ADMIT_NEXT_ONE : ADMIT_NEXT_ANY,
    values: [
      args.endpointId,
      args.queues,
      args.sessionId,
      args.leaseSeconds,
      args.id ?? null,
      list.map(([q]) => q),
      list.map(([, p]) => p.updatedAt),
      list.map(([, p]) => p.bounds?.start ?? null),
      list.map(([, p]) => p.bounds?.next ?? null),
    ],
  });
  const row = res.rows[0];
  const answer = row?.admission as AdmitAnswer | null | undefined;
  if (!row || !answer) return { kind: 'none' };
  if (answer.o_stale) return { kind: 'stale' };
  const policy = policies.get(row.id === null ? (answer.picked_queue ?? '') : row.queue);
  if (!policy) {
    // A queue the probe saw no policy on was admitted uncharged; a refusal always names a probed queue.
    if (row.id === null) return { kind: 'stale' };
    return { kind: 'claimed', todo: claimedTodo(row), admission: null, charged: false };
  }
  const counters = {
    inFlight: answer.o_in_flight,
    latestWindow: policy.bounds ? { start: policy.bounds.start, used: answer.o_used } : null,
    earliestLeaseExpiry: answer.o_earliest_lease ? new Date(answer.o_earliest_lease) : null,
  };
  const decision = decide(policy.row, counters, new Date(answer.o_at));
  if (!answer.o_admitted || row.id === null) {
    if (decision.admit) return { kind: 'stale' };
    return { kind: 'refused', policyId: policy.row.id, queue: answer.picked_queue ?? '', decision };
  }
  return {
    kind: 'claimed',
    todo: claimedTodo(row),
    admission: decision.admit ? headroom(decision) : null,
    charged: policy.bounds !== null,
  };
}

export type { AdmitAnswer };
