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
import { planGeneric } from '../db/prepared.js';
import { answersOf, insertRowsSql, insertRowsValues, type InsertedRow, type InsertRowsAnswer } from './todo-rows.js';
import type { InsertTodoArgs } from './todos.js';

export type CreatedRow = InsertedRow;

const INSERT_EACH = insertRowsSql('each');

/**
 * Inserts the rows (all of endpoint `endpointId`) in one statement (store/todo-rows.ts)
 * and answers, in the rows' order, each inserted todo, the holder of each key held before
 * the statement, or null for a row to run alone: its queue is not granted (or the endpoint
 * stopped taking work), its key went to another row of the batch or to a concurrent
 * create, or it is past the endpoint's room under `liveLimit` (the live-todo quota; null:
 * unchecked). The room is read once, in the statement: row k (1-based) goes in only when
 * the endpoint's live todos plus k stay within the limit, as k single creates checking in
 * turn would; a row past it runs alone, where the single check answers it.
 */
export async function insertTodosBatch(
  db: Queryable,
  endpointId: string,
  rows: InsertTodoArgs[],
  windowSeconds: number,
  liveLimit: number | null = null,
): Promise<(CreatedRow | null)[]> {
  const res = await db.query<InsertRowsAnswer>(
    planGeneric({
      name: 'insert_todos_each',
      text: INSERT_EACH,
      values: insertRowsValues(endpointId, rows, windowSeconds, liveLimit),
    }),
  );
  return answersOf(res.rows, rows).map((a) => a ?? null);
}
