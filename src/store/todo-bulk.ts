// The bulk create (docs/design/todos.md, "Bulk create"): up to a thousand todos of one
// endpoint in one statement, the arrays unnested into one multi-row INSERT. Keys are
// looked up in the same statement, so every write of a batch commits together; the
// todo_ready notices go once per queue, and one todo_scheduled (the earliest) for rows
// scheduled ahead. Rows are inserted in key order: an insert waits on
// a concurrent transaction's uncommitted entry for the same key, and two batches taking
// their keys in opposite orders would deadlock. Validation is the use case's (todos/create-bulk.ts):
// this module takes rows it may write.

import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import { HOLDER_ORDER, holdsKey } from './todo-idempotency.js';
import {
  LIVE_ENDPOINT,
  NOTIFY_READY,
  NOTIFY_SCHEDULED,
  TODO_COLUMNS,
  todoColumnsOf,
  withoutNotice,
} from './todo-sql.js';
import { assertTakesWork } from './endpoints.js';
import type { InsertTodoArgs } from './todos.js';

export interface BulkRow {
  todo: Todo;
  created: boolean;
}

/**
 * One round: inserts the rows whose key nobody holds and answers, by row index, each
 * inserted todo and the holder of each held key. A row missing from the answer lost its
 * key to a concurrent create after this statement's snapshot.
 */
async function insertRound(
  db: Queryable,
  endpointId: string,
  rows: InsertTodoArgs[],
  windowSeconds: number,
): Promise<(BulkRow | undefined)[]> {
  const column = <T>(pick: (r: InsertTodoArgs) => T) => rows.map(pick);
  const res = await db.query<Todo & { created: boolean; notified?: unknown }>(
    `WITH ${LIVE_ENDPOINT},
     input AS (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                            $10::text[], $11::text[], $12::text[], $13::int[], $14::smallint[],
                            $15::timestamptz[], $16::int[], $17::int[])
         AS i(id, queue, title, body, payload, kind, source, created_by_human_id, created_by_endpoint_id,
              idempotency_key, max_attempts, priority, not_before, retry_base_seconds, retry_max_seconds)),
     held AS (
       SELECT DISTINCT ON (t.idempotency_key) ${todoColumnsOf('t')} FROM todos t
        WHERE t.endpoint_id = $1 AND ${holdsKey('$2')}
          AND t.idempotency_key = ANY (SELECT i.idempotency_key FROM input i WHERE i.idempotency_key IS NOT NULL)
        ORDER BY t.idempotency_key, ${HOLDER_ORDER}),
     r AS (
       INSERT INTO todos (endpoint_id, id, queue, title, body, payload, kind, source,
         created_by_human_id, created_by_endpoint_id, idempotency_key, max_attempts,
         priority, not_before, retry_base_seconds, retry_max_seconds, traceparent, ready_at)
       SELECT $1, i.id, i.queue, i.title, i.body, i.payload::jsonb, i.kind, i.source,
              i.created_by_human_id, i.created_by_endpoint_id, i.idempotency_key, i.max_attempts,
              i.priority, i.not_before, i.retry_base_seconds, i.retry_max_seconds, $18::text,
              CASE WHEN i.not_before > now() THEN NULL ELSE now() END
         FROM input i CROSS JOIN live
        WHERE (i.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM held h WHERE h.idempotency_key = i.idempotency_key))
          -- All or nothing: a row on a queue no longer granted writes none of them.
          AND NOT EXISTS (SELECT 1 FROM input x WHERE x.queue <> ALL (live.queues))
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
     SELECT true AS created, r.*, (SELECT count(*) FROM notices) AS notified FROM r
     UNION ALL
     SELECT false AS created, h.*, 0 AS notified FROM held h`,
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
      // One trace context for the whole request: a scalar, not another array.
      rows[0]?.traceparent ?? null,
    ],
  );
  const byId = new Map<string, BulkRow>();
  const byKey = new Map<string, BulkRow>();
  for (const raw of res.rows) {
    const { created, ...rest } = raw;
    const todo = withoutNotice<Todo>(rest) as Todo;
    if (created) byId.set(todo.id, { todo, created: true });
    else if (todo.idempotency_key !== null) byKey.set(todo.idempotency_key, { todo, created: false });
  }
  return rows.map((r) => byId.get(r.id) ?? (r.idempotencyKey === null ? undefined : byKey.get(r.idempotencyKey)));
}

/**
 * Inserts the rows (all of one endpoint, their keys distinct), or answers each held key's
 * holder; the answer is in the rows' order. A row that lost its key to a concurrent create
 * is read again in a next round, which finds the winner (three rounds, as insertTodo).
 */
export async function insertTodos(
  db: Queryable,
  endpointId: string,
  rows: InsertTodoArgs[],
  windowSeconds: number,
): Promise<BulkRow[]> {
  const answers: (BulkRow | undefined)[] = new Array<BulkRow | undefined>(rows.length);
  let open = rows.map((_, index) => index);
  for (let round = 0; round < 3 && open.length > 0; round++) {
    const found = await insertRound(
      db,
      endpointId,
      open.map((index) => rows[index] as InsertTodoArgs),
      windowSeconds,
    );
    open.forEach((index, at) => (answers[index] = found[at]));
    const before = open.length;
    open = open.filter((index) => answers[index] === undefined);
    if (open.length === before) {
      await assertTakesWork(
        db,
        endpointId,
        open.map((index) => (rows[index] as InsertTodoArgs).queue),
      );
    }
  }
  if (open.length > 0) throw new Error('bulk insert did not settle after 3 rounds');
  return answers as BulkRow[];
}
