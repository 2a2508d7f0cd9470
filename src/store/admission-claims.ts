// The admission statements of a claim (docs/design/admission.md, "How the claim path does
// it"), as rows. When the claim statement's probe meets policies on the requested queues
// it claims nothing and returns them; probedPolicies() reads them back. The admit
// statement is one statement that picks and locks a todo, then its queue's policy
// (admission_admit(), 0005_admission.sql), reads the in-flight count and window counter
// with fresh snapshots, decides, charges and claims; admit() runs it with the window
// bounds the caller computed (src/admission/admit.ts) and returns its row. What the
// answer means is decided by the caller: this module knows no policy. Endpoints without
// policies on the requested queues never come here.

import { DEFAULT_ATTEMPTS_KEPT } from '../domain/attempts.js';
import type { Queryable } from '../db/pool.js';
import type { AdmitAnswer, PolicyRow } from '../domain/admission.js';
import { byIdSql, nextSql, type ClaimArgs, type ClaimedTodo, type ClaimRow, type ProbedPolicy } from './claims.js';

/**
 * A claim statement's claimed row as a todo: its `admission` column dropped. That column
 * is the row's last property, and deleting the last-added property keeps the object's
 * fast shape, so the hot path neither copies the row nor slows later reads of it.
 */
export function claimedTodo(row: ClaimedTodo & { admission?: unknown }): ClaimedTodo {
  delete row.admission;
  return row;
}

/** A policy as the probe read it, and the probe's instant. */
export interface ProbedRow {
  row: PolicyRow;
  /** updated_at as the database wrote it: a Date would cut the microseconds. */
  updatedAt: string;
  /** The database clock when the probe read the policy: the instant its window bounds are for. */
  probedAt: Date;
}

/** The policies a probe returned instead of a claim (rows without todo columns), in row order. */
export function probedPolicies(rows: ClaimRow[]): ProbedRow[] {
  const out: ProbedRow[] = [];
  for (const r of rows) {
    if (r.id !== null || !r.admission || !('probed_at' in r.admission)) continue;
    const json: ProbedPolicy = r.admission;
    const row = {
      ...(json as unknown as PolicyRow),
      created_at: date(json.created_at),
      updated_at: date(json.updated_at),
    };
    out.push({ row, updatedAt: String(json.updated_at), probedAt: date(json.probed_at) });
  }
  return out;
}

const date = (v: unknown) => new Date(String(v));

/** What the admit statement is given per probed policy, by queue: the probe's updated_at and the current window's bounds. */
export interface AdmitGate {
  updatedAt: string;
  /** Null when the policy has no window limit: nothing is charged. */
  bounds: { start: Date; next: Date } | null;
}

/** The admit statement's row: its claimed todo (null on a refusal: the row has no todo columns) and admission_admit()'s answer. */
export interface AdmitRow {
  todo: ClaimedTodo | null;
  answer: AdmitAnswer;
}

const ADMIT_NEXT_ONE = nextSql('t.queue = ($2::text[])[1]', 'admit');
const ADMIT_NEXT_ANY = nextSql('t.queue = ANY($2::text[])', 'admit');
const ADMIT_BY_ID = byIdSql('admit');

/**
 * One admit statement over `args.queues` (claim_next) or the named todo (claim): the
 * picked todo is claimed uncharged when its queue has no policy, or admitted, charged and
 * claimed, or refused by its policy. Null when nothing was picked.
 */
export async function admit(
  db: Queryable,
  args: ClaimArgs & { id?: string },
  policies: ReadonlyMap<string, AdmitGate>,
): Promise<AdmitRow | null> {
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
      args.keepAttempts ?? DEFAULT_ATTEMPTS_KEPT,
    ],
  });
  const row = res.rows[0];
  const answer = row?.admission as AdmitAnswer | null | undefined;
  if (!row || !answer) return null;
  return { todo: row.id === null ? null : claimedTodo(row), answer };
}

export type { AdmitAnswer };
