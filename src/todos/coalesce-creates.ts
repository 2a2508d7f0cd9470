// The create lane (docs/design/coalescing.md, "Creates"): create_todo's live-todo quota
// check and insert, for callers of one endpoint, coalesce into one statement
// (store/todos-batch.ts), which reads the endpoint's room once for the batch. A row the
// batch left out (its queue no longer granted, its key taken by another row of the batch,
// past the room) runs the single check and insert afterwards, for its caller only, which
// answers it as a lone call would: the todo, the key's holder, or the error.

import { GroupCommitLanes, retryAlone } from '../db/group-commit.js';
import type { Queryable } from '../db/pool.js';
import { requireRoomUnder } from '../quotas/check.js';
import { insertTodosBatch, type CreatedRow } from '../store/todos-batch.js';
import { insertTodo, type InsertTodoArgs } from '../store/todos.js';

export interface CreateLanes {
  /**
   * Inserts the todo when the endpoint has room under `liveLimit` live todos (null: no
   * check), else refuses with the quota's error.
   */
  insertTodo: (a: InsertTodoArgs, windowSeconds: number, liveLimit: number | null) => Promise<CreatedRow>;
}

interface Input {
  args: InsertTodoArgs;
  windowSeconds: number;
  liveLimit: number | null;
}

/** The single create: the room check, then the insert, as two statements. */
export async function checkedInsert(db: Queryable, i: Input): Promise<CreatedRow> {
  if (i.liveLimit !== null) await requireRoomUnder(db, i.args.endpointId, 1, i.liveLimit);
  return insertTodo(db, i.args, i.windowSeconds);
}

export function createLanes(
  pool: Queryable,
  maxBatch: number,
  observe: (statement: string) => (size: number) => void,
): CreateLanes {
  const lanes = new GroupCommitLanes<Input, CreatedRow | null>({
    one: (i) => checkedInsert(pool, i),
    // A lane is one endpoint's, window's and limit's (the key below), so the first input speaks for all.
    many: (inputs) =>
      insertTodosBatch(
        pool,
        inputs[0]?.args.endpointId ?? '',
        inputs.map((i) => i.args),
        inputs[0]?.windowSeconds ?? 0,
        inputs[0]?.liveLimit ?? null,
      ),
    maxBatch,
    alone: retryAlone,
    observe: observe('insert_todo'),
  });
  return {
    insertTodo: async (args, windowSeconds, liveLimit) => {
      const input = { args, windowSeconds, liveLimit };
      return (
        (await lanes.submit(`${windowSeconds} ${liveLimit} ${args.endpointId}`, input)) ?? checkedInsert(pool, input)
      );
    },
  };
}
