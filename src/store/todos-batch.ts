// The coalesced create (docs/design/coalescing.md, "Creates"): the inserts of several
// create_todo calls of one endpoint in one statement and one commit. Unlike the bulk create
// (store/todo-bulk.ts) each row is one caller's: its own trace context, schedule and event,
// and its own fate — a row on a queue no longer granted, or whose key another row of the
// batch took, is left out (null) and its caller runs the single insert (store/todos.ts),
// which answers it exactly as before (the holder, or the error). Keys held before the
// statement are answered with their holder in the same statement. The notices go once per
// queue, and one todo_scheduled (the earliest) for rows scheduled ahead: a commit that
// notifies holds PostgreSQL's notify lock through its WAL flush, so one notice per row
// would serialise what the batch shares.

import type { Queryable } from '../db/pool.js';
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

export interface CreatedRow {
  todo: Todo;
  created: boolean;
}

/**
 * Inserts the rows (all of endpoint `endpointId`) in one statement and answers, in the
 * rows' order, each inserted todo, the holder of each key held before the statement, or
 * null for a row to run alone: its queue is not granted (or the endpoint stopped taking
 * work), its key went to another row of the batch or to a concurrent create, or it is past
 * the endpoint's room under `liveLimit` (the live-todo quota; null: unchecked). The room is
 * read once, in the statement: row k (1-based) goes in only when the endpoint's live todos
 * plus k stay within the limit, as k single creates checking in turn would; a row past it
 * runs alone, where the single check answers it. Rows are inserted in key order, as the
 * bulk create's, so two batches never wait on each other's keys in opposite orders.
 */
export async function insertTodosBatch(
  db: Queryable,
  endpointId: string,
  rows: InsertTodoArgs[],
  windowSeconds: number,
  liveLimit: number | null = null,
): Promise<(CreatedRow | null)[]> {
  const column = <T>(pick: (r: InsertTodoArgs) => T) => rows.map(pick);
  const res = await db.query<Todo & { created: boolean; notified?: unknown; room: string | null }>(
    `WITH ${LIVE_ENDPOINT},
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
        WHERE i.queue = ANY (live.queues)
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
     SELECT false AS created, h.*, 0 AS notified, (SELECT n FROM room) AS room FROM held h`,
    [
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
    ],
  );
  const byId = new Map<string, CreatedRow>();
  const byKey = new Map<string, CreatedRow>();
  let room = Infinity;
  for (const raw of res.rows) {
    const { created, room: left, ...rest } = raw;
    if (left !== null) room = Number(left);
    const todo = withoutNotice<Todo>(rest) as Todo;
    if (created) byId.set(todo.id, { todo, created: true });
    else if (todo.idempotency_key !== null) byKey.set(todo.idempotency_key, { todo, created: false });
  }
  return rows.map((r, k) =>
    k >= room
      ? null
      : (byId.get(r.id) ?? (r.idempotencyKey === null ? undefined : byKey.get(r.idempotencyKey)) ?? null),
  );
}
