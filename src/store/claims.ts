// The lease verbs: claim, claim_next, heartbeat, complete, fail, release. Each is one
// statement (data-modifying CTEs), so a cycle costs one round trip per verb and the
// todo row, its attempt rows and any notification change together or not at all.
// A null result means the conditional update matched nothing; the caller classifies it.

import type { Queryable } from '../db/pool.js';
import type { Todo, TodoSummary } from '../domain/todo.js';
import {
  CLAIMABLE,
  NOTIFY_READY,
  TODO_SUMMARY_COLUMNS,
  closeAttemptSql,
  todoColumnsOf,
  withoutNotice,
} from './todo-sql.js';

const COLUMNS = todoColumnsOf('t');
const SUMMARY = todoColumnsOf('t', TODO_SUMMARY_COLUMNS);

export interface ClaimArgs {
  endpointId: string;
  queues: string[];
  sessionId: string;
  leaseSeconds: number;
}

/**
 * Claims the row chosen by `pick` (a CTE yielding at most one locked endpoint_id, id):
 * closes a lapsed attempt (takeover), marks the row claimed, opens a new attempt. The
 * `claimed` CTE reads `taken_over`, which runs `closed` before `opened` inserts, so the
 * one-open-attempt index never sees two open rows.
 */
function claimSql(pick: string): string {
  return `WITH pick AS (${pick}),
    closed AS (${closeAttemptSql('pick', 'lease_expired')} RETURNING a.seq),
    claimed AS (
      UPDATE todos t SET
        state = 'claimed', owner_session_id = $3, attempt = t.attempt + 1, claims = t.claims + 1,
        lease_expires_at = now() + make_interval(secs => $4), claimed_at = now(), next_retry_at = NULL,
        ready_at = CASE WHEN t.attempt + 1 < t.max_attempts THEN now() + make_interval(secs => $4) END,
        updated_at = now()
      FROM pick WHERE t.endpoint_id = pick.endpoint_id AND t.id = pick.id
      RETURNING ${COLUMNS}, (SELECT count(*) FROM closed) AS taken_over),
    opened AS (
      INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at)
      SELECT endpoint_id, id, claims, attempt, owner_session_id, claimed_at, lease_expires_at FROM claimed)
    SELECT * FROM claimed`;
}

export type ClaimedTodo = Todo & { taken_over: number };

// Ordered by ready_at alone so the scan follows an index and stops at the first
// unlocked row; ties (a bulk insert) fall back to index order. One queue compares with
// `=` so the planner can use the per-queue index; several use the per-endpoint one.
const nextSql = (queueMatch: string) =>
  claimSql(`
  SELECT t.endpoint_id, t.id, t.claims FROM todos t
   WHERE t.endpoint_id = $1 AND ${queueMatch} AND ${CLAIMABLE}
   ORDER BY t.ready_at
   LIMIT 1 FOR UPDATE SKIP LOCKED`);
const CLAIM_NEXT_ONE = nextSql('t.queue = ($2::text[])[1]');
const CLAIM_NEXT_ANY = nextSql('t.queue = ANY($2::text[])');

/** The oldest claimable todo over the given queues, skipping rows other claimers hold. */
export async function claimNext(db: Queryable, a: ClaimArgs): Promise<ClaimedTodo | null> {
  const sql = a.queues.length === 1 ? CLAIM_NEXT_ONE : CLAIM_NEXT_ANY;
  const res = await db.query<ClaimedTodo>({
    name: a.queues.length === 1 ? 'claim_next_one' : 'claim_next_any',
    text: sql,
    values: [a.endpointId, a.queues, a.sessionId, a.leaseSeconds],
  });
  return res.rows[0] ?? null;
}

const CLAIM_BY_ID = claimSql(`
  SELECT t.endpoint_id, t.id, t.claims FROM todos t
   WHERE t.endpoint_id = $1 AND t.queue = ANY($2::text[]) AND t.id = $5 AND ${CLAIMABLE}
   FOR UPDATE`);

/** One named todo, waiting for a concurrent claimer's lock and re-checking after it. */
export async function claimById(db: Queryable, a: ClaimArgs & { id: string }): Promise<ClaimedTodo | null> {
  const res = await db.query<ClaimedTodo>({
    name: 'claim_by_id',
    text: CLAIM_BY_ID,
    values: [a.endpointId, a.queues, a.sessionId, a.leaseSeconds, a.id],
  });
  return res.rows[0] ?? null;
}

export interface OwnedArgs {
  endpointId: string;
  id: string;
  sessionId: string;
}

const OWNED = `t.endpoint_id = $1 AND t.id = $2 AND t.state = 'claimed' AND t.owner_session_id = $3 AND NOT t.synthetic`;

export async function heartbeat(db: Queryable, a: OwnedArgs & { leaseSeconds: number }): Promise<TodoSummary | null> {
  const res = await db.query<TodoSummary>({
    name: 'heartbeat',
    text: `WITH r AS (
       UPDATE todos t SET lease_expires_at = now() + make_interval(secs => $4),
         ready_at = CASE WHEN t.attempt < t.max_attempts THEN now() + make_interval(secs => $4) END,
         updated_at = now()
       WHERE ${OWNED} RETURNING ${SUMMARY}),
     a AS (UPDATE todo_attempts a SET lease_expires_at = r.lease_expires_at FROM r
            WHERE a.endpoint_id = r.endpoint_id AND a.todo_id = r.id AND a.seq = r.claims AND a.ended_at IS NULL)
     SELECT * FROM r`,
    values: [a.endpointId, a.id, a.sessionId, a.leaseSeconds],
  });
  return res.rows[0] ?? null;
}

export async function complete(db: Queryable, a: OwnedArgs & { result: unknown }): Promise<TodoSummary | null> {
  const res = await db.query<TodoSummary>({
    name: 'complete',
    text: `WITH r AS (
       UPDATE todos t SET state = 'done', result = $4::jsonb, completed_at = now(),
         lease_expires_at = NULL, ready_at = NULL, updated_at = now()
       WHERE ${OWNED} RETURNING ${SUMMARY}),
     closed AS (${closeAttemptSql('r', 'completed')})
     SELECT * FROM r`,
    values: [a.endpointId, a.id, a.sessionId, a.result === undefined ? null : JSON.stringify(a.result)],
  });
  return res.rows[0] ?? null;
}

/** Below the cap the retry waits schedule[attempt - 1] seconds (last entry beyond). */
export async function fail(
  db: Queryable,
  a: OwnedArgs & { error: string | null; result: unknown; schedule: number[] },
): Promise<TodoSummary | null> {
  const retryAt = `CASE WHEN t.attempt < t.max_attempts THEN now() + make_interval(
      secs => ($6::int[])[least(t.attempt, cardinality($6::int[]))]) END`;
  const res = await db.query<TodoSummary>({
    name: 'fail',
    text: `WITH r AS (
       UPDATE todos t SET state = 'failed', error = $4, result = coalesce($5::jsonb, t.result),
         lease_expires_at = NULL, next_retry_at = ${retryAt}, ready_at = ${retryAt}, updated_at = now()
       WHERE ${OWNED} RETURNING ${SUMMARY}),
     closed AS (${closeAttemptSql('r', 'failed')})
     SELECT * FROM r`,
    values: [
      a.endpointId,
      a.id,
      a.sessionId,
      a.error,
      a.result === undefined ? null : JSON.stringify(a.result),
      a.schedule,
    ],
  });
  return res.rows[0] ?? null;
}

/** Back to pending with the attempt count kept; announces the todo as ready again. */
export async function release(db: Queryable, a: OwnedArgs): Promise<TodoSummary | null> {
  const res = await db.query<TodoSummary>({
    name: 'release',
    text: `WITH r AS (
       UPDATE todos t SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL,
         ready_at = now(), updated_at = now()
       WHERE ${OWNED} RETURNING ${SUMMARY}),
     closed AS (${closeAttemptSql('r', 'released')})
     SELECT r.*, ${NOTIFY_READY} AS notified FROM r`,
    values: [a.endpointId, a.id, a.sessionId],
  });
  return withoutNotice(res.rows[0]);
}
