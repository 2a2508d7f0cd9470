// The owner's verbs on a claim: heartbeat, complete, fail, release (docs/design/todos.md,
// "Settling a claim"). Each is one conditional update on the claimed row and its holder —
// the lease token's attempt, or without a token the claiming session — closing the open
// attempt in the same statement, with what the agent left on it. A null result means the
// update matched nothing; the caller classifies it (src/todos/context.ts).

import type { Queryable } from '../db/pool.js';
import type { AttemptNote } from '../domain/attempts.js';
import { MAX_DOUBLINGS, type Backoff } from '../domain/backoff.js';
import type { TodoSummary } from '../domain/todo.js';
import {
  NOTIFY_READY,
  TODO_SUMMARY_COLUMNS,
  closeAttemptSql,
  todoColumnsOf,
  tokenHash,
  withoutNotice,
} from './todo-sql.js';

const SUMMARY = todoColumnsOf('t', TODO_SUMMARY_COLUMNS);

export interface OwnedArgs {
  endpointId: string;
  id: string;
  sessionId: string;
  /** The claim's lease token: when given it, not the session, says who holds the claim. */
  leaseToken?: string | null;
}

/**
 * Whether a policy admitted the settled claim, so that settling it may free a held
 * queue's slot (the reopen on complete, fail and release, docs/design/admission.md: the
 * caller then looks for the held policy, src/budgets/reopen.ts). A claim made where no
 * policy existed settles with the statement as it was before admission, without reading
 * admission_policies (0011_lean_claim_writes.sql).
 */
export const UNDER_POLICY = `t.claimed_under_policy AS under_policy`;

/**
 * A settled claim's row: the summary, whether a policy admitted it, how long it ran, and
 * the todo's stored trace context (the verb's span links to it).
 */
export type SettledTodo = TodoSummary & {
  under_policy: boolean;
  run_seconds: number;
  traceparent: string | null;
  claimer: string | null;
};

/** A heartbeat's row: the summary and the stored trace context. */
export type BeatTodo = TodoSummary & { traceparent: string | null };

export const TRACEPARENT = `t.traceparent`;

/**
 * The session that claimed (the closed attempt's): a settle by lease token may come from
 * another session or none, and the doorbell's idle ring is for the claimer.
 */
export const CLAIMER = `(SELECT session_id FROM closed) AS claimer`;

/** How long the settled claim ran (its claimed_at, which settling leaves as it was), for switchboard_run_seconds. */
export const RUN_SECONDS = `extract(epoch FROM now() - t.claimed_at)::float8 AS run_seconds`;

/**
 * The caller holds the claim: without a token ($tok null), its session is the owner;
 * with one, the token is the current attempt's (one primary-key probe of todo_attempts),
 * whatever session or none the call came from.
 */
export const owned = (tok: string) => `t.endpoint_id = $1 AND t.id = $2 AND t.state = 'claimed' AND NOT t.synthetic
  AND CASE WHEN ${tok}::text IS NULL THEN t.owner_session_id = $3
      ELSE EXISTS (SELECT 1 FROM todo_attempts a WHERE a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
                     AND a.seq = t.claims AND a.ended_at IS NULL AND a.lease_token_hash = ${tokenHash(`${tok}::text`)})
      END`;

/** The note's SET list on the closing attempt, from three parameters starting at `from`. */
export const noteSet = (from: number) =>
  `summary = $${from}::text, summary_truncated = $${from + 1}::boolean, artifact = $${from + 2}::text`;
export const noteValues = (n: Partial<AttemptNote>) => [
  n.summary ?? null,
  n.summaryTruncated ?? false,
  n.artifact ?? null,
];

// Statement texts are built once: the driver compares a named statement's text with the
// one it prepared on every call, which is a pointer check for the same string.
const HEARTBEAT = `WITH r AS (
       UPDATE todos t SET lease_expires_at = now() + make_interval(secs => $4),
         ready_at = CASE WHEN t.attempt < t.max_attempts THEN now() + make_interval(secs => $4) END,
         updated_at = now()
       WHERE ${owned('$5')} RETURNING ${SUMMARY}, ${TRACEPARENT}),
     a AS (UPDATE todo_attempts a SET lease_expires_at = r.lease_expires_at FROM r
            WHERE a.endpoint_id = r.endpoint_id AND a.todo_id = r.id AND a.seq = r.claims AND a.ended_at IS NULL)
     SELECT * FROM r`;

export async function heartbeat(db: Queryable, a: OwnedArgs & { leaseSeconds: number }): Promise<BeatTodo | null> {
  const res = await db.query<BeatTodo>({
    name: 'heartbeat',
    text: HEARTBEAT,
    values: [a.endpointId, a.id, a.sessionId, a.leaseSeconds, a.leaseToken ?? null],
  });
  return res.rows[0] ?? null;
}

const COMPLETE = `WITH r AS (
       UPDATE todos t SET state = 'done', result = $4::jsonb, completed_at = now(),
         lease_expires_at = NULL, ready_at = NULL, updated_at = now()
       WHERE ${owned('$5')} RETURNING ${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'completed', noteSet(6))} RETURNING a.session_id)
     SELECT r.*, ${CLAIMER} FROM r`;

export async function complete(
  db: Queryable,
  a: OwnedArgs & Partial<AttemptNote> & { result: unknown },
): Promise<SettledTodo | null> {
  const res = await db.query<SettledTodo>({
    name: 'complete',
    text: COMPLETE,
    values: [
      a.endpointId,
      a.id,
      a.sessionId,
      a.result === undefined ? null : JSON.stringify(a.result),
      a.leaseToken ?? null,
      ...noteValues(a),
    ],
  });
  return res.rows[0] ?? null;
}

// Below the cap the retry waits the todo's backoff (its own, else the server's $6 base and
// $7 cap) for the attempt that failed, times a jitter factor drawn per failure from
// [1 - $8, 1 + $8] (one draw per statement, `jitter.draw`, so next_retry_at and ready_at
// agree), unless $9 (retry) is false: then it is dead-lettered now. The arithmetic is
// retryDelaySeconds() in src/domain/todo.ts, per row.
const RETRY_AT = `CASE WHEN $9::boolean AND t.attempt < t.max_attempts THEN now() + make_interval(secs =>
      least(coalesce(t.retry_max_seconds, $7::int)::float8,
            coalesce(t.retry_base_seconds, $6::int) * power(2::float8, least(greatest(t.attempt - 1, 0), ${MAX_DOUBLINGS})))
      * (1 - $8::float8 + 2 * $8::float8 * jitter.draw)) END`;
const FAIL = `WITH r AS (
       UPDATE todos t SET state = 'failed', error = $4, result = coalesce($5::jsonb, t.result),
         lease_expires_at = NULL, next_retry_at = ${RETRY_AT}, ready_at = ${RETRY_AT}, updated_at = now()
       FROM (SELECT random() AS draw) jitter
       WHERE ${owned('$10')} RETURNING ${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'failed', noteSet(11))} RETURNING a.session_id)
     SELECT r.*, ${CLAIMER} FROM r`;

/**
 * Below the cap the retry waits the todo's backoff, jittered (RETRY_AT); `backoff` is the
 * server's, for todos without their own. `retry: false` dead-letters it now.
 */
export async function fail(
  db: Queryable,
  a: OwnedArgs &
    Partial<AttemptNote> & { error: string | null; result: unknown; backoff: Backoff; jitter: number; retry?: boolean },
): Promise<SettledTodo | null> {
  const res = await db.query<SettledTodo>({
    name: 'fail',
    text: FAIL,
    values: [
      a.endpointId,
      a.id,
      a.sessionId,
      a.error,
      a.result === undefined ? null : JSON.stringify(a.result),
      a.backoff.baseSeconds,
      a.backoff.maxSeconds,
      a.jitter,
      a.retry ?? true,
      a.leaseToken ?? null,
      ...noteValues(a),
    ],
  });
  return res.rows[0] ?? null;
}

const RELEASE = `WITH r AS (
       UPDATE todos t SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL,
         ready_at = now(), updated_at = now()
       WHERE ${owned('$4')} RETURNING ${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'released', noteSet(5))} RETURNING a.session_id)
     SELECT r.*, ${CLAIMER}, ${NOTIFY_READY} AS notified FROM r`;

/** Back to pending with the attempt count kept; announces the todo as ready again. */
export async function release(db: Queryable, a: OwnedArgs & Partial<AttemptNote>): Promise<SettledTodo | null> {
  const res = await db.query<SettledTodo & { notified: unknown }>({
    name: 'release',
    text: RELEASE,
    values: [a.endpointId, a.id, a.sessionId, a.leaseToken ?? null, ...noteValues(a)],
  });
  return withoutNotice(res.rows[0]);
}
