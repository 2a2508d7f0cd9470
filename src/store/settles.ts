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

/** Who a settle names and says holds the claim, as SQL expressions (parameters or a batch's input columns). */
export interface HolderSql {
  endpoint: string;
  id: string;
  session: string;
  /** The lease token, or SQL null. */
  tok: string;
}

/**
 * The caller holds the claim: without a token (null), its session is the owner; with
 * one, the token is the current attempt's (one primary-key probe of todo_attempts),
 * whatever session or none the call came from.
 */
export const ownedBy = (
  h: HolderSql,
) => `t.endpoint_id = ${h.endpoint} AND t.id = ${h.id} AND t.state = 'claimed' AND NOT t.synthetic
  AND CASE WHEN ${h.tok}::text IS NULL THEN t.owner_session_id = ${h.session}
      ELSE EXISTS (SELECT 1 FROM todo_attempts a WHERE a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
                     AND a.seq = t.claims AND a.ended_at IS NULL AND a.lease_token_hash = ${tokenHash(`${h.tok}::text`)})
      END`;

/** The single statements' holder: $1 the endpoint, $2 the todo, $3 the session, `tok` the token. */
const HOLDER = (tok: string): HolderSql => ({ endpoint: '$1', id: '$2', session: '$3', tok });

/** ownedBy over the single statements' parameters (HOLDER). */
export const owned = (tok: string) => ownedBy(HOLDER(tok));

/** The note's SET list on the closing attempt, from three SQL expressions. */
export const noteSetOf = (summary: string, truncated: string, artifact: string) =>
  `summary = ${summary}::text, summary_truncated = ${truncated}::boolean, artifact = ${artifact}::text`;
/** The note's SET list on the closing attempt, from three parameters starting at `from`. */
export const noteSet = (from: number) => noteSetOf(`$${from}`, `$${from + 1}`, `$${from + 2}`);
export const noteValues = (n: Partial<AttemptNote>) => [
  n.summary ?? null,
  n.summaryTruncated ?? false,
  n.artifact ?? null,
];

/**
 * Where a settle statement reads its inputs. The single statements read parameters
 * (SINGLE); a batch (./settles-batch.ts) reads rows of a CTE `i` with an ordinal `ord`,
 * which each answer row carries so the caller maps rows back to inputs.
 */
export interface SettleShape {
  /** CTEs before `r`, each followed by a comma: the batch's input rows. */
  with: string;
  /** FROM items of the todo update (the batch's `i`). */
  from: string[];
  /**
   * Conditions on the todo ANDed before the ownership check: the batch's todo keys as
   * arrays, so the plan finds its rows by primary key whatever the count of claimed todos.
   */
  keys: string;
  /** Columns RETURNING and the attempt close start with (the batch's ordinal). */
  ord: string;
  /** The FROM list of the attempt close, which reads `r` (and the batch's note). */
  closeFrom: string;
  /** The claimer column of the answer, from the CTE `closed`. */
  claimer: string;
}

export const SINGLE: SettleShape = { with: '', from: [], keys: '', ord: '', closeFrom: 'r', claimer: CLAIMER };

const fromList = (items: string[]) => (items.length > 0 ? `FROM ${items.join(', ')} ` : '');

/** The heartbeat: a new lease (`lease`: seconds) on the todo and on its open attempt. */
export const heartbeatSql = (s: SettleShape, v: { holder: HolderSql; lease: string }) => `WITH ${s.with}r AS (
       UPDATE todos t SET lease_expires_at = now() + make_interval(secs => ${v.lease}),
         ready_at = CASE WHEN t.attempt < t.max_attempts THEN now() + make_interval(secs => ${v.lease}) END,
         updated_at = now()
       ${fromList(s.from)}WHERE ${s.keys}${ownedBy(v.holder)} RETURNING ${s.ord}${SUMMARY}, ${TRACEPARENT}),
     a AS (UPDATE todo_attempts a SET lease_expires_at = r.lease_expires_at FROM r
            WHERE a.endpoint_id = r.endpoint_id AND a.todo_id = r.id AND a.seq = r.claims AND a.ended_at IS NULL)
     SELECT * FROM r`;

// Statement texts are built once: the driver compares a named statement's text with the
// one it prepared on every call, which is a pointer check for the same string.
const HEARTBEAT = heartbeatSql(SINGLE, { holder: HOLDER('$5'), lease: '$4' });

export async function heartbeat(db: Queryable, a: OwnedArgs & { leaseSeconds: number }): Promise<BeatTodo | null> {
  const res = await db.query<BeatTodo>({
    name: 'heartbeat',
    text: HEARTBEAT,
    values: [a.endpointId, a.id, a.sessionId, a.leaseSeconds, a.leaseToken ?? null],
  });
  return res.rows[0] ?? null;
}

/** The complete: done, with `result` (jsonb), the attempt closed `completed` with the note. */
export const completeSql = (
  s: SettleShape,
  v: { holder: HolderSql; result: string; note: string },
) => `WITH ${s.with}r AS (
       UPDATE todos t SET state = 'done', result = ${v.result}, completed_at = now(),
         lease_expires_at = NULL, ready_at = NULL, updated_at = now()
       ${fromList(s.from)}WHERE ${s.keys}${ownedBy(v.holder)}
       RETURNING ${s.ord}${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'completed', v.note, s.closeFrom)} RETURNING ${s.ord}a.session_id)
     SELECT r.*, ${s.claimer} FROM r`;
const COMPLETE = completeSql(SINGLE, { holder: HOLDER('$5'), result: '$4::jsonb', note: noteSet(6) });

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

/**
 * When a failed todo is retried: below the cap, after the todo's backoff (its own, else
 * the server's `base` and `max`) for the attempt that failed, times a jitter factor drawn
 * per failure from [1 - jitter, 1 + jitter] (`draw`: one random() per failure, so
 * next_retry_at and ready_at agree), unless `retry` is false: then never (dead-lettered
 * now). The arithmetic is retryDelaySeconds() in src/domain/todo.ts, per row.
 */
export const retryAtSql = (v: { retry: string; base: string; max: string; jitter: string; draw: string }) =>
  `CASE WHEN ${v.retry}::boolean AND t.attempt < t.max_attempts THEN now() + make_interval(secs =>
      least(coalesce(t.retry_max_seconds, ${v.max}::int)::float8,
            coalesce(t.retry_base_seconds, ${v.base}::int) * power(2::float8, least(greatest(t.attempt - 1, 0), ${MAX_DOUBLINGS})))
      * (1 - ${v.jitter}::float8 + 2 * ${v.jitter}::float8 * ${v.draw})) END`;

/**
 * The fail: failed with `error` and `result` (jsonb, null keeps the stored one), retried
 * at `retryAt`, the attempt closed `failed` with the note. `from`: FROM items besides the
 * shape's (the single statement's one jitter draw).
 */
export const failSql = (
  s: SettleShape,
  v: { holder: HolderSql; error: string; result: string; retryAt: string; note: string; from: string[] },
) => `WITH ${s.with}r AS (
       UPDATE todos t SET state = 'failed', error = ${v.error}, result = coalesce(${v.result}, t.result),
         lease_expires_at = NULL, next_retry_at = ${v.retryAt}, ready_at = ${v.retryAt}, updated_at = now()
       ${fromList([...s.from, ...v.from])}WHERE ${s.keys}${ownedBy(v.holder)}
       RETURNING ${s.ord}${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'failed', v.note, s.closeFrom)} RETURNING ${s.ord}a.session_id)
     SELECT r.*, ${s.claimer} FROM r`;
const FAIL = failSql(SINGLE, {
  holder: HOLDER('$10'),
  error: '$4',
  result: '$5::jsonb',
  retryAt: retryAtSql({ retry: '$9', base: '$6', max: '$7', jitter: '$8', draw: 'jitter.draw' }),
  note: noteSet(11),
  from: ['(SELECT random() AS draw) jitter'],
});

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

/** The release: pending again, attempt count kept, the attempt closed `released`; announces the todo ready. */
export const releaseSql = (s: SettleShape, v: { holder: HolderSql; note: string }) => `WITH ${s.with}r AS (
       UPDATE todos t SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL,
         ready_at = now(), updated_at = now()
       ${fromList(s.from)}WHERE ${s.keys}${ownedBy(v.holder)}
       RETURNING ${s.ord}${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}),
     closed AS (${closeAttemptSql('r', 'released', v.note, s.closeFrom)} RETURNING ${s.ord}a.session_id)
     SELECT r.*, ${s.claimer}, ${NOTIFY_READY} AS notified FROM r`;
const RELEASE = releaseSql(SINGLE, { holder: HOLDER('$4'), note: noteSet(5) });

/** Back to pending with the attempt count kept; announces the todo as ready again. */
export async function release(db: Queryable, a: OwnedArgs & Partial<AttemptNote>): Promise<SettledTodo | null> {
  const res = await db.query<SettledTodo & { notified: unknown }>({
    name: 'release',
    text: RELEASE,
    values: [a.endpointId, a.id, a.sessionId, a.leaseToken ?? null, ...noteValues(a)],
  });
  return withoutNotice(res.rows[0]);
}
