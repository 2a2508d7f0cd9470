// Bulk cancel and retry of one endpoint's todos by filter (docs/design/todos.md, "Bulk
// actions"), and their audit rows. Each batch is one autocommit statement over the next
// rows in id order after a keyset cursor, locked `FOR UPDATE SKIP LOCKED`: a row a claimer
// holds is skipped (left as the claimer leaves it), never waited on, and the state is
// re-checked under the lock, so a row claimed meanwhile is not changed unless its state
// is one the action asked for. The transitions are the single cancel / retry_now of
// todo-operator.ts, row for row. This module decides nothing: the use case picks states.

import { cancelAskSql } from './asks.js';
import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';
import { titleMatchSql } from './todo-find.js';
import { NOTIFY_BOARD, NOTIFY_READY, QUEUE_GRANTED, closeAttemptSql } from './todo-sql.js';

/** What narrows a bulk action; null fields do not narrow. `titleLike` is an escaped ILIKE pattern. */
export interface BulkFilterArgs {
  endpointId: string;
  states: string[];
  queue: string | null;
  kind: string | null;
  source: string | null;
  createdBefore: Date | null;
  createdAfter: Date | null;
  titleLike: string | null;
  /** Exactly this priority. */
  priority: number | null;
  /** This priority or higher. */
  priorityMin: number | null;
}

export interface BatchArgs extends BulkFilterArgs {
  /** The last id of the previous batch ('' for the first). */
  after: string;
  limit: number;
}

export interface BatchResult {
  /** Rows the batch looked at (locked); fewer than the limit means the scan is done. */
  picked: number;
  changed: number;
  /** The cursor for the next batch: the greatest id picked. */
  last: string | null;
}

/**
 * The filter over alias `t`, parameters $1–$10 (fixed positions; a null parameter does not
 * narrow). The title test is the todos list's (store/todo-find.ts), present only when
 * there is a title to match: inside an `IS NULL OR` the planner could not join it to the
 * trigram index.
 */
const matches = (a: BulkFilterArgs) => `t.endpoint_id = $1 AND t.state = ANY($2::text[]) AND NOT t.synthetic
  AND ($3::text IS NULL OR t.queue = $3)
  AND ($4::text IS NULL OR t.kind = $4)
  AND ($5::text IS NULL OR t.source = $5)
  AND ($6::timestamptz IS NULL OR t.created_at < $6)
  AND ($7::timestamptz IS NULL OR t.created_at > $7)
  AND ($9::int IS NULL OR t.priority = $9)
  AND ($10::int IS NULL OR t.priority >= $10)
  AND ${a.titleLike === null ? '$8::text IS NULL' : titleMatchSql('$1', '$8::text')}`;

const filterParams = (a: BulkFilterArgs) => [
  a.endpointId,
  a.states,
  a.queue,
  a.kind,
  a.source,
  a.createdBefore,
  a.createdAfter,
  a.titleLike,
  a.priority,
  a.priorityMin,
];

/** The next batch after the cursor, locked without waiting; $11 cursor, $12 limit. */
const pick = (a: BulkFilterArgs) => `SELECT t.endpoint_id, t.id FROM todos t
   WHERE ${matches(a)} AND t.id > $11
   ORDER BY t.id LIMIT $12 FOR UPDATE SKIP LOCKED`;

const batchParams = (a: BatchArgs) => [...filterParams(a), a.after, a.limit];

/** How many todos the filter matches now (a dry run, and the audit's `matched`). */
export async function countBulkMatches(db: Queryable, a: BulkFilterArgs): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM todos t WHERE ${matches(a)}`,
    filterParams(a),
  );
  return res.rows[0]?.n ?? 0;
}

async function runBatch(db: Queryable, sql: string, a: BatchArgs): Promise<BatchResult> {
  const res = await db.query<BatchResult>(sql, batchParams(a));
  const row = res.rows[0];
  return { picked: row?.picked ?? 0, changed: row?.changed ?? 0, last: row?.last ?? null };
}

const RESULT = `(SELECT count(*) FROM picked)::int AS picked, (SELECT count(*) FROM r)::int AS changed,
  (SELECT max(id) FROM picked) AS last, (SELECT count(*) FROM notified)::int AS notices`;

/**
 * One batch of cancels: open attempts and open questions (docs/design/ask-human.md) close
 * as canceled; boards hear it once per endpoint.
 */
export function cancelBatch(db: Queryable, a: BatchArgs): Promise<BatchResult> {
  return runBatch(
    db,
    `WITH picked AS (${pick(a)}),
     r AS (
       UPDATE todos t SET state = 'canceled', lease_expires_at = NULL, next_retry_at = NULL,
         ready_at = NULL, completed_at = now(), updated_at = now()
       FROM picked WHERE t.endpoint_id = picked.endpoint_id AND t.id = picked.id
       RETURNING t.endpoint_id, t.id, t.claims),
     closed AS (${closeAttemptSql('r', 'canceled')}),
     unasked AS (${cancelAskSql('r')}),
     notified AS (SELECT ${NOTIFY_BOARD} FROM (SELECT DISTINCT endpoint_id FROM r) r)
     SELECT ${RESULT}`,
    a,
  );
}

/**
 * One batch of retries: failed or canceled → pending with attempt 0, ready now; one
 * todo_ready per queue. A live todo holding one of the rows' idempotency keys makes the
 * whole statement fail (`conflict`, nothing changed): the caller then retries that batch's
 * rows one by one (retryNow), skipping the ones in conflict.
 */
export async function retryBatch(db: Queryable, a: BatchArgs): Promise<BatchResult> {
  try {
    return await runBatch(
      db,
      `WITH picked AS (${pick(a)}),
     r AS (
       UPDATE todos t SET state = 'pending', attempt = 0, owner_session_id = NULL,
         lease_expires_at = NULL, next_retry_at = NULL, claimed_at = NULL, completed_at = NULL,
         error = NULL, result = NULL, ready_at = now(), updated_at = now()
       FROM picked WHERE t.endpoint_id = picked.endpoint_id AND t.id = picked.id AND ${QUEUE_GRANTED}
       RETURNING t.endpoint_id, t.queue),
     notified AS (SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM r) r)
     SELECT ${RESULT}`,
      a,
    );
  } catch (err) {
    throw translatePgError(err, 'a live todo already holds the idempotency key of a todo in this batch');
  }
}

/** The ids of the next batch without locking them (the one-by-one fallback of retryBatch). */
export async function batchIds(db: Queryable, a: BatchArgs): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT t.id FROM todos t WHERE ${matches(a)} AND t.id > $11 ORDER BY t.id LIMIT $12`,
    batchParams(a),
  );
  return res.rows.map((r) => r.id);
}

export interface BulkAuditStart {
  endpointId: string;
  actorHumanId: string;
  action: 'cancel' | 'retry';
  filter: Record<string, unknown>;
  matched: number;
}

/** Records a bulk action as it starts; finishBulkAudit completes the row. */
export async function startBulkAudit(db: Queryable, a: BulkAuditStart): Promise<string> {
  const res = await db.query<{ id: string }>(
    `INSERT INTO todo_bulk_audit (endpoint_id, actor_human_id, action, filter, matched)
     VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING id::text`,
    [a.endpointId, a.actorHumanId, a.action, JSON.stringify(a.filter), a.matched],
  );
  const id = res.rows[0]?.id;
  if (id === undefined) throw new Error('todo_bulk_audit insert returned no row');
  return id;
}

export async function finishBulkAudit(db: Queryable, id: string, changed: number): Promise<void> {
  await db.query(`UPDATE todo_bulk_audit SET changed = $2, finished_at = now() WHERE id = $1::bigint`, [id, changed]);
}

export interface BulkAuditRow {
  id: string;
  actor_human_id: string;
  action: 'cancel' | 'retry';
  filter: Record<string, unknown>;
  matched: number;
  changed: number;
  at: Date;
  finished_at: Date | null;
}

/** Audit rows written before the cutoff, one batch (the retention sweep, across endpoints). */
export async function pruneBulkAudit(db: Queryable, a: { olderThanSeconds: number; limit: number }): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT id FROM todo_bulk_audit WHERE at < now() - make_interval(secs => $1)
        ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM todo_bulk_audit b USING old WHERE b.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}

/** The endpoint's bulk actions, newest first. */
export async function listBulkAudit(db: Queryable, endpointId: string, limit: number): Promise<BulkAuditRow[]> {
  const res = await db.query<BulkAuditRow>(
    `SELECT id::text, actor_human_id, action, filter, matched, changed, at, finished_at FROM todo_bulk_audit
      WHERE endpoint_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
    [endpointId, limit],
  );
  return res.rows;
}
