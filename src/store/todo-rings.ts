// The doorbell rings of one todo, newest first, for the board's todo drawer
// (docs/design/doorbell-acknowledgement.md): when each was sent, to which session, and
// whether it was heard (acked, and how) or called unheard when its window closed. Read by
// the endpoint's primary-key prefix.

import type { Queryable } from '../db/pool.js';

export interface TodoRing {
  id: string;
  session_id: string;
  sent_at: Date;
  acked_at: Date | null;
  ack_via: 'claim' | 'ack' | null;
  acked_session_id: string | null;
  unheard_at: Date | null;
}

export async function listTodoRings(
  db: Queryable,
  endpointId: string,
  todoId: string,
  limit: number,
): Promise<TodoRing[]> {
  const res = await db.query<TodoRing>(
    `SELECT id, session_id, sent_at, acked_at, ack_via, acked_session_id, unheard_at FROM doorbell_rings
      WHERE endpoint_id = $1 AND todo_id = $2 ORDER BY sent_at DESC, id DESC LIMIT $3`,
    [endpointId, todoId, limit],
  );
  return res.rows;
}
