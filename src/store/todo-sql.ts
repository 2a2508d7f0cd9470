// SQL fragments shared by every statement over todos: the one claimable predicate, the
// column list a todo is read with, and the todo_ready notification. Written once here
// so the claim paths, the reaper and the listings cannot drift apart.

import { notifySql } from '../db/bus.js';

/**
 * Claimable: pending; or claimed with a lapsed lease and attempts left (takeover without
 * waiting for the reaper); or failed with a due retry and attempts left. Over alias `t`.
 * Never a synthetic (self-test) todo: those are claimed by id only (store/doorbell-tests.ts).
 * `ready_at <= …` is the index condition that goes with it (see 0001_init.sql); a scheduled
 * todo (pending, not_before ahead) has ready_at NULL, so it is never claimable until the
 * promotion pass (store/todo-schedule.ts) gives it one.
 * The instant is the statement's, not the transaction's (`now()`): a claim runs inside a
 * transaction with its doorbell acknowledgement, and the budgeted path's admit statement
 * comes after its probe, so work that became ready meanwhile must count as ready.
 */
export const CLAIMABLE = `(t.ready_at <= statement_timestamp() AND NOT t.synthetic AND (
    t.state = 'pending'
    OR (t.state = 'claimed' AND t.lease_expires_at <= statement_timestamp() AND t.attempt < t.max_attempts)
    OR (t.state = 'failed' AND t.next_retry_at <= statement_timestamp() AND t.attempt < t.max_attempts)))`;

/**
 * Claim rank over alias `t`: a pending todo's priority; anything else claimable (a lapsed
 * claim, a due retry) ranks -101, after every pending todo. Claims order by this, then
 * ready_at, which is the ready indexes' key (0014_work_model.sql says why); the planner
 * matches the index only on this exact expression.
 */
export const claimRankOf = (alias: string) =>
  `(CASE WHEN ${alias}.state = 'pending' THEN ${alias}.priority ELSE -101 END)`;
export const CLAIM_RANK = claimRankOf('t');

/** The columns of a Todo (everything but the internal ready_at). */
export const TODO_COLUMNS = `endpoint_id, id, queue, title, body, payload, kind, source,
  created_by_human_id, created_by_endpoint_id, schedule_id, event_id, idempotency_key, state, attempt, max_attempts,
  priority, not_before, claims, owner_session_id, lease_expires_at, next_retry_at, claimed_at, completed_at, result,
  error, ring_attempts, last_ringed_at, synthetic, created_at, updated_at`;

/**
 * What the lease verbs answer with (TodoSummary): the todo's identity and lifecycle, not
 * its content. Fewer columns is measurably faster on the claim → complete hot path.
 */
export const TODO_SUMMARY_COLUMNS = `endpoint_id, id, queue, title, state, attempt, max_attempts, claims,
  owner_session_id, lease_expires_at, next_retry_at, completed_at, error, created_at, updated_at`;

/** TODO_COLUMNS qualified by a table alias, for RETURNING lists of joined updates. */
export function todoColumnsOf(alias: string, columns = TODO_COLUMNS): string {
  return columns
    .split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');
}

/** Drops the `notified` column a statement selected only to run its pg_notify. */
export function withoutNotice<T>(row: (T & { notified?: unknown }) | undefined): T | null {
  if (!row) return null;
  delete row.notified;
  return row;
}

/** pg_notify for one todo_ready per (endpoint, queue) of rows aliased `r`. */
export const NOTIFY_READY = notifySql('todo_ready', { endpoint_id: 'r.endpoint_id', queue: 'r.queue' });

/**
 * pg_notify for a todo of row `r` created scheduled (its not_before ahead): every instance
 * re-arms its promotion timer for that instant (src/sweeps/schedule.ts).
 */
export const NOTIFY_SCHEDULED = notifySql('todo_scheduled', {
  endpoint_id: 'r.endpoint_id',
  not_before: 'r.not_before',
});

/** pg_notify telling boards that a todo of row `r`'s endpoint changed without becoming ready. */
export const NOTIFY_BOARD = notifySql('board_changed', { endpoint_id: 'r.endpoint_id' });

/** The stored form of a lease token given as SQL text (a column or a parameter): its SHA-256. */
export const tokenHash = (token: string) => `sha256(convert_to(${token}, 'UTF8'))`;

/**
 * Closes the open attempt of each todo in CTE `src` (which yields endpoint_id, id and
 * claims) with the given outcome, and `note` (a SET list: what the agent said) when given.
 * `claims` is the seq of the latest attempt, so this is a primary-key lookup. `from` is
 * the FROM list when the note reads more than `src` (a batch joins its input rows).
 */
export function closeAttemptSql(src: string, outcome: string, note?: string, from = src): string {
  return `UPDATE todo_attempts a SET ended_at = now(), outcome = '${outcome}'${note ? `, ${note}` : ''}
    FROM ${from} WHERE a.endpoint_id = ${src}.endpoint_id AND a.todo_id = ${src}.id
      AND a.seq = ${src}.claims AND a.ended_at IS NULL`;
}

/**
 * The CTE `live`: one row while endpoint $1 takes work (not revoked, not expired), with
 * its granted `queues`, locked FOR KEY SHARE. An insert of todos selects FROM it and keeps
 * only rows whose queue is in `live.queues`, so a todo never lands on a revoked endpoint
 * or on a queue being removed: a revoke or a queue removal first locks the endpoint row
 * FOR UPDATE (store/endpoints.ts revokeEndpoint, store/endpoint-queues.ts lockQueueUses),
 * which waits for inserts holding this lock, then sees what they wrote; an insert that
 * comes after waits for it and then reads the row as the revoke or removal left it (the
 * lock re-reads the newest version). The
 * foreign key's check takes the same lock later in the statement; taking it first costs
 * about 0.03 ms an insert, and no WAL (bench/README.md, "Creating a todo on a live endpoint").
 */
/**
 * SQL over alias `t`: the todo's queue is still granted to its endpoint ($1), read under
 * the same FOR KEY SHARE lock as LIVE_ENDPOINT, so a retry racing a queue's removal either
 * lands before it (and the removal sees a live todo) or finds the queue gone.
 */
export const QUEUE_GRANTED = `t.queue = ANY ((SELECT e.queues FROM endpoints e WHERE e.id = $1 FOR KEY SHARE)::text[])`;

export const LIVE_ENDPOINT = `live AS (
  SELECT queues FROM endpoints WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
  FOR KEY SHARE)`;
