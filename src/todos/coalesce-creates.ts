// The create lane (docs/design/coalescing.md, "Creates"): create_todo's inserts of one
// endpoint coalesce into one statement (store/todos-batch.ts). A row the batch left out
// (its queue no longer granted, its key taken by another row of the batch) runs the single
// insert afterwards, for its caller only, which answers it as a lone call would: the key's
// holder, or the error.

import { GroupCommitLanes, retryAlone } from '../db/group-commit.js';
import type { Queryable } from '../db/pool.js';
import { insertTodosBatch, type CreatedRow } from '../store/todos-batch.js';
import { insertTodo, type InsertTodoArgs } from '../store/todos.js';

export interface CreateLanes {
  insertTodo: (a: InsertTodoArgs, windowSeconds: number) => Promise<CreatedRow>;
}

interface Input {
  args: InsertTodoArgs;
  windowSeconds: number;
}

export function createLanes(
  pool: Queryable,
  maxBatch: number,
  observe: (statement: string) => (size: number) => void,
): CreateLanes {
  const lanes = new GroupCommitLanes<Input, CreatedRow | null>({
    one: (i) => insertTodo(pool, i.args, i.windowSeconds),
    // A lane is one endpoint's and one window's (the key below), so the first input speaks for all.
    many: (inputs) =>
      insertTodosBatch(
        pool,
        inputs[0]?.args.endpointId ?? '',
        inputs.map((i) => i.args),
        inputs[0]?.windowSeconds ?? 0,
      ),
    maxBatch,
    alone: retryAlone,
    observe: observe('insert_todo'),
  });
  return {
    insertTodo: async (args, windowSeconds) =>
      (await lanes.submit(`${windowSeconds} ${args.endpointId}`, { args, windowSeconds })) ??
      insertTodo(pool, args, windowSeconds),
  };
}
