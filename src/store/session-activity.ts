// What the board shows per live MCP session besides its row: when it was last rung and
// how many todos it holds claimed. Both are read for a handful of session ids at a time.

import type { Queryable } from '../db/pool.js';

export interface SessionActivity {
  session_id: string;
  last_ring_at: Date | null;
  claims_held: number;
}

/**
 * The last ring through idx_rings_session (one index probe per session) and the claims
 * held from the endpoint's claimed todos alone (the partial todos_claimed_idx: work in
 * flight, never the backlog).
 */
export async function sessionActivity(
  db: Queryable,
  endpointId: string,
  sessionIds: string[],
): Promise<SessionActivity[]> {
  if (sessionIds.length === 0) return [];
  const res = await db.query<SessionActivity>(
    `WITH held AS (
       SELECT owner_session_id, count(*)::int AS n FROM todos
        WHERE state = 'claimed' AND endpoint_id = $1 AND owner_session_id = ANY($2::text[])
        GROUP BY owner_session_id)
     SELECT s.id AS session_id,
            (SELECT r.sent_at FROM doorbell_rings r WHERE r.endpoint_id = $1 AND r.session_id = s.id
              ORDER BY r.sent_at DESC LIMIT 1) AS last_ring_at,
            coalesce(held.n, 0) AS claims_held
       FROM unnest($2::text[]) AS s(id) LEFT JOIN held ON held.owner_session_id = s.id`,
    [endpointId, sessionIds],
  );
  return res.rows;
}
