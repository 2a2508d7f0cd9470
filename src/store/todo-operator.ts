// Operator transitions a human makes from the API or board: retry now and cancel.
// Scoped by endpoint like everything else; the caller has already checked ownership.

import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import { cancelAskSql } from './asks.js';
import { translatePgError } from './pg-errors.js';
import {
  NOTIFY_BOARD,
  NOTIFY_READY,
  QUEUE_GRANTED,
  closeAttemptSql,
  todoColumnsOf,
  withoutNotice,
} from './todo-sql.js';

const COLUMNS = todoColumnsOf('t');

/** failed or canceled → pending with attempt 0, on a queue still granted; history (claims, attempts) is kept. */
export async function retryNow(db: Queryable, endpointId: string, id: string): Promise<Todo | null> {
  try {
    const res = await db.query<Todo>(
      `WITH r AS (
         UPDATE todos t SET state = 'pending', attempt = 0, owner_session_id = NULL,
           lease_expires_at = NULL, next_retry_at = NULL, claimed_at = NULL, completed_at = NULL,
           error = NULL, result = NULL, ready_at = now(), updated_at = now()
         WHERE t.endpoint_id = $1 AND t.id = $2 AND t.state IN ('failed', 'canceled') AND NOT t.synthetic
           AND ${QUEUE_GRANTED}
         RETURNING ${COLUMNS})
       SELECT r.*, ${NOTIFY_READY} AS notified FROM r`,
      [endpointId, id],
    );
    return withoutNotice(res.rows[0]);
  } catch (err) {
    throw translatePgError(err, 'a live todo already holds this idempotency key');
  }
}

/**
 * pending, claimed, failed or waiting_on_human → canceled; an open attempt closes as
 * canceled, and so does an open question (docs/design/ask-human.md); boards hear it.
 */
export async function cancel(db: Queryable, endpointId: string, id: string): Promise<Todo | null> {
  const res = await db.query<Todo>(
    `WITH r AS (
       UPDATE todos t SET state = 'canceled', lease_expires_at = NULL, next_retry_at = NULL,
         ready_at = NULL, completed_at = now(), updated_at = now()
       WHERE t.endpoint_id = $1 AND t.id = $2 AND t.state IN ('pending', 'claimed', 'failed', 'waiting_on_human')
         AND NOT t.synthetic
       RETURNING ${COLUMNS}),
     closed AS (${closeAttemptSql('r', 'canceled')}),
     unasked AS (${cancelAskSql('r')})
     SELECT r.*, ${NOTIFY_BOARD} AS notified FROM r`,
    [endpointId, id],
  );
  return withoutNotice(res.rows[0]);
}
