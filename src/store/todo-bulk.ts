// The bulk create (docs/design/todos.md, "Bulk create"): up to a thousand todos of one
// endpoint in one statement (store/todo-rows.ts, shared with the coalesced create), all or
// nothing. Keys are looked up in the same statement, so every write of a batch commits
// together. Validation is the use case's (todos/create-bulk.ts): this module takes rows it
// may write.

import type { Queryable } from '../db/pool.js';
import { planGeneric } from '../db/prepared.js';
import { assertTakesWork } from './endpoints.js';
import { answersOf, insertRowsSql, insertRowsValues, type InsertedRow, type InsertRowsAnswer } from './todo-rows.js';
import type { InsertTodoArgs } from './todos.js';

export type BulkRow = InsertedRow;

// All or nothing: a row on a queue no longer granted writes none of them.
const INSERT_ALL = insertRowsSql('all');

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
    // One round inserts the rows whose key nobody holds and answers each inserted todo and
    // each held key's holder; a row without an answer lost its key to a concurrent create
    // after the statement's snapshot.
    const round = open.map((index) => rows[index] as InsertTodoArgs);
    const res = await db.query<InsertRowsAnswer>(
      planGeneric({
        name: 'insert_todos_all',
        text: INSERT_ALL,
        values: insertRowsValues(endpointId, round, windowSeconds, null),
      }),
    );
    const found = answersOf(res.rows, round);
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
