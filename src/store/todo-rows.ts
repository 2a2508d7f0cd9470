// The one statement that inserts many todos of one endpoint from arrays, shared by the
// bulk create (store/todo-bulk.ts: a client's batch, all or nothing) and the coalesced
// create (store/todos-batch.ts: many callers' rows, each with its own fate). One row per
// array element: the arrays are unnested into `input`, keys held before the statement are
// answered with their holder (`held`), the rest are inserted in key order (an insert waits
// on a concurrent transaction's uncommitted entry for the same key, and two statements
// taking their keys in opposite orders would deadlock), and the todo_ready notices go once
// per queue, one todo_scheduled (the earliest) for rows scheduled ahead.
//
// Parameters: $1 the endpoint, $2 the key window in seconds, $3…$20 the rows' arrays
// (ROW_ARRAYS order), $21 the live-todo limit (null: unchecked). With a limit the room is
// read once, in the statement, and row k (1-based) is kept only while the live todos plus
// k stay within it; every answer row carries the room, so the caller can tell which rows
// were past it.

import type { Todo } from '../domain/todo.js';
import { liveTodoCountSql } from './quotas.js';
import { HOLDER_ORDER, holdsKey } from './todo-idempotency.js';
import {
  LIVE_ENDPOINT,
  NOTIFY_READY,
  NOTIFY_SCHEDULED,
  TODO_COLUMNS,
  todoColumnsOf,
  withoutNotice,
} from './todo-sql.js';
import type { InsertTodoArgs } from './todos.js';

/** A row's answer: the inserted todo, or the holder of its key. */
export interface InsertedRow {
  todo: Todo;
  created: boolean;
}

/**
 * How rows on a queue the endpoint no longer grants (or of an endpoint that stopped taking
 * work) are treated: `all` writes none of the rows, `each` leaves out only those rows.
 */
export type QueueCheck = 'all' | 'each';

const QUEUE_CHECK: Record<QueueCheck, string> = {
  all: 'NOT EXISTS (SELECT 1 FROM input x WHERE x.queue <> ALL (live.queues))',
  each: 'i.queue = ANY (live.queues)',
};

export const insertRowsSql = (check: QueueCheck) => `WITH ${LIVE_ENDPOINT},
     room AS (SELECT $21::bigint - ${liveTodoCountSql('$1')} AS n WHERE $21::bigint IS NOT NULL),
     input AS (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                            $10::text[], $11::text[], $12::text[], $13::int[], $14::smallint[],
                            $15::timestamptz[], $16::int[], $17::int[], $18::text[], $19::text[], $20::text[])
                  WITH ORDINALITY
         AS i(id, queue, title, body, payload, kind, source, created_by_human_id, created_by_endpoint_id,
              idempotency_key, max_attempts, priority, not_before, retry_base_seconds, retry_max_seconds,
              schedule_id, traceparent, event_id, ord)
        WHERE NOT EXISTS (SELECT 1 FROM room WHERE i.ord > room.n)),
     held AS (
       SELECT DISTINCT ON (t.idempotency_key) ${todoColumnsOf('t')} FROM todos t
        WHERE t.endpoint_id = $1 AND ${holdsKey('$2')}
          AND t.idempotency_key = ANY (SELECT i.idempotency_key FROM input i WHERE i.idempotency_key IS NOT NULL)
        ORDER BY t.idempotency_key, ${HOLDER_ORDER}),
     r AS (
       INSERT INTO todos (endpoint_id, id, queue, title, body, payload, kind, source,
         created_by_human_id, created_by_endpoint_id, idempotency_key, max_attempts,
         priority, not_before, retry_base_seconds, retry_max_seconds, schedule_id, traceparent, event_id, ready_at)
       SELECT $1, i.id, i.queue, i.title, i.body, i.payload::jsonb, i.kind, i.source,
              i.created_by_human_id, i.created_by_endpoint_id, i.idempotency_key, i.max_attempts,
              i.priority, i.not_before, i.retry_base_seconds, i.retry_max_seconds, i.schedule_id, i.traceparent,
              i.event_id, CASE WHEN i.not_before > now() THEN NULL ELSE now() END
         FROM input i CROSS JOIN live
        WHERE ${QUEUE_CHECK[check]}
          AND (i.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM held h WHERE h.idempotency_key = i.idempotency_key))
        ORDER BY i.idempotency_key
       ON CONFLICT (endpoint_id, idempotency_key)
         WHERE idempotency_key IS NOT NULL
           AND (state IN ('pending', 'claimed', 'waiting_on_human') OR (state = 'failed' AND next_retry_at IS NOT NULL))
         DO NOTHING
       RETURNING ${TODO_COLUMNS}),
     notices AS (
       SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM r WHERE r.not_before IS NULL OR r.not_before <= now()) r
       UNION ALL
       SELECT ${NOTIFY_SCHEDULED} FROM (SELECT endpoint_id, min(not_before) AS not_before FROM r
                                         WHERE r.not_before > now() GROUP BY endpoint_id) r)
     SELECT true AS created, r.*, (SELECT count(*) FROM notices) AS notified, (SELECT n FROM room) AS room FROM r
     UNION ALL
     SELECT false AS created, h.*, 0 AS notified, (SELECT n FROM room) AS room FROM held h`;

/** $1…$21 of insertRowsSql for `rows`. */
export function insertRowsValues(
  endpointId: string,
  rows: InsertTodoArgs[],
  windowSeconds: number,
  liveLimit: number | null,
): unknown[] {
  const column = <T>(pick: (r: InsertTodoArgs) => T) => rows.map(pick);
  return [
    endpointId,
    windowSeconds,
    column((r) => r.id),
    column((r) => r.queue),
    column((r) => r.title),
    column((r) => r.body),
    column((r) => (r.payload === undefined ? null : JSON.stringify(r.payload))),
    column((r) => r.kind),
    column((r) => r.source),
    column((r) => r.createdByHumanId),
    column((r) => r.createdByEndpointId),
    column((r) => r.idempotencyKey),
    column((r) => r.maxAttempts),
    column((r) => r.priority ?? 0),
    column((r) => r.notBefore ?? null),
    column((r) => r.retryBackoff?.baseSeconds ?? null),
    column((r) => r.retryBackoff?.maxSeconds ?? null),
    column((r) => r.scheduleId ?? null),
    column((r) => r.traceparent ?? null),
    column((r) => r.eventId ?? null),
    liveLimit,
  ];
}

export type InsertRowsAnswer = Todo & { created: boolean; notified?: unknown; room: string | null };

/**
 * Each row's answer, in the rows' order: its inserted todo, its key's holder, or undefined
 * (left out: past the room, its queue not granted, its key lost to another row or create).
 */
export function answersOf(answer: InsertRowsAnswer[], rows: InsertTodoArgs[]): (InsertedRow | undefined)[] {
  const byId = new Map<string, InsertedRow>();
  const byKey = new Map<string, InsertedRow>();
  let room = Infinity;
  for (const raw of answer) {
    const { created, room: left, ...rest } = raw;
    if (left !== null) room = Number(left);
    const todo = withoutNotice<Todo>(rest) as Todo;
    if (created) byId.set(todo.id, { todo, created: true });
    else if (todo.idempotency_key !== null) byKey.set(todo.idempotency_key, { todo, created: false });
  }
  return rows.map((r, k) =>
    k >= room ? undefined : (byId.get(r.id) ?? (r.idempotencyKey === null ? undefined : byKey.get(r.idempotencyKey))),
  );
}
