// Who holds an idempotency key: the live todo with it, else the newest terminal one
// changed within the window (docs/design/todos.md, "Idempotent create"). Read through
// todos_idempotency_recent_idx (0016_dedup_window.sql). The live unique index
// todos_idempotency_key still settles two concurrent inserts; this module only reads.

import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import { TODO_COLUMNS } from './todo-sql.js';

/** Live over alias `t`: the rows todos_idempotency_key (0001_init.sql, 0041_ask_human.sql) keeps unique. */
const LIVE = `(t.state IN ('pending', 'claimed', 'waiting_on_human') OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))`;

/**
 * Whether row `t` holds its key: live, or terminal and last changed less than the window
 * ago; `windowParam` is the statement's parameter with the window in seconds. A synthetic
 * (self-test) todo never holds one: a create never answers with it.
 */
export function holdsKey(windowParam: string): string {
  return `(NOT t.synthetic AND (${LIVE} OR t.updated_at > now() - make_interval(secs => ${windowParam}::double precision)))`;
}

/** Among a key's holders, the live one first, else the most recently changed terminal one. */
export const HOLDER_ORDER = `${LIVE} DESC, t.updated_at DESC, t.id DESC`;

/** The todo holding `key` on the endpoint, or null when the key is free. */
export async function findKeyHolder(
  db: Queryable,
  endpointId: string,
  key: string,
  windowSeconds: number,
): Promise<Todo | null> {
  const res = await db.query<Todo>(
    `SELECT ${TODO_COLUMNS} FROM todos t
      WHERE t.endpoint_id = $1 AND t.idempotency_key = $2 AND ${holdsKey('$3')}
      ORDER BY ${HOLDER_ORDER} LIMIT 1`,
    [endpointId, key, windowSeconds],
  );
  return res.rows[0] ?? null;
}
