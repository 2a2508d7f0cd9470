// SQL fragments shared by every statement over todos: the one claimable predicate, the
// column list a todo is read with, and the todo_ready notification. Written once here
// so the claim paths, the reaper and the listings cannot drift apart.

import { notifySql } from '../db/bus.js';

/**
 * Claimable: pending; or claimed with a lapsed lease and attempts left (takeover without
 * waiting for the reaper); or failed with a due retry and attempts left. Over alias `t`.
 * Never a synthetic (self-test) todo: those are claimed by id only (store/doorbell-tests.ts).
 * `ready_at <= …` is the index condition that goes with it (see 0001_init.sql).
 * The instant is the statement's, not the transaction's (`now()`): a claim runs inside a
 * transaction with its doorbell acknowledgement, and the budgeted path's admit statement
 * comes after its probe, so work that became ready meanwhile must count as ready.
 */
export const CLAIMABLE = `(t.ready_at <= statement_timestamp() AND NOT t.synthetic AND (
    t.state = 'pending'
    OR (t.state = 'claimed' AND t.lease_expires_at <= statement_timestamp() AND t.attempt < t.max_attempts)
    OR (t.state = 'failed' AND t.next_retry_at <= statement_timestamp() AND t.attempt < t.max_attempts)))`;

/** The columns of a Todo (everything but the internal ready_at). */
export const TODO_COLUMNS = `endpoint_id, id, queue, title, body, payload, kind, source,
  created_by_human_id, created_by_endpoint_id, idempotency_key, state, attempt, max_attempts,
  claims, owner_session_id, lease_expires_at, next_retry_at, claimed_at, completed_at, result,
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

/** pg_notify telling boards that a todo of row `r`'s endpoint changed without becoming ready. */
export const NOTIFY_BOARD = notifySql('board_changed', { endpoint_id: 'r.endpoint_id' });

/**
 * Closes the open attempt of each todo in CTE `src` (which yields endpoint_id, id and
 * claims) with the given outcome. `claims` is the seq of the latest attempt, so this is
 * a primary-key lookup.
 */
export function closeAttemptSql(src: string, outcome: string): string {
  return `UPDATE todo_attempts a SET ended_at = now(), outcome = '${outcome}'
    FROM ${src} WHERE a.endpoint_id = ${src}.endpoint_id AND a.todo_id = ${src}.id
      AND a.seq = ${src}.claims AND a.ended_at IS NULL`;
}
