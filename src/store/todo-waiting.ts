// The reads behind a todo's derived `waiting` (docs/design/todos.md, "Why is it waiting"):
// the endpoint's facts (presence columns, queues, whether any MCP session is live), read
// once per request, and for the todos of one read their claim-order keys and, on the
// queues nothing else holds back, how many claimable todos are ahead of each. Rows only:
// which reason wins is src/todos/waiting.ts's.

import type { Queryable } from '../db/pool.js';
import { AHEAD_CAP } from '../domain/waiting.js';
import { CLAIMABLE, CLAIM_RANK, claimRankOf } from './todo-sql.js';

export interface WaitingFacts {
  /** The database clock of the read. */
  now: Date;
  queues: string[];
  shift: string | null;
  presence_override: 'in' | 'out' | null;
  override_until: Date | null;
  override_by: string | null;
  /** Whether a session of the endpoint is open (closed_at null): its grant is the endpoint's queues. */
  has_session: boolean;
}

/** The endpoint's facts, or null when it does not exist. Primary key, then mcp_sessions_live_idx. */
export async function waitingFacts(db: Queryable, endpointId: string): Promise<WaitingFacts | null> {
  const res = await db.query<WaitingFacts>(
    `SELECT now() AS now, e.queues, e.shift, e.presence_override, e.override_until, e.override_by,
            EXISTS (SELECT 1 FROM mcp_sessions s WHERE s.endpoint_id = e.id AND s.closed_at IS NULL) AS has_session
       FROM endpoints e WHERE e.id = $1`,
    [endpointId],
  );
  return res.rows[0] ?? null;
}

export interface WaitingKeys {
  id: string;
  priority: number;
  not_before: Date | null;
  ready_at: Date | null;
  /** ready_at has come (the row is in the claim order now). */
  ready: boolean;
  /** Claimable todos ahead of it, counted up to AHEAD_CAP + 1; null when not counted. */
  ahead: number | null;
}

// Ahead in claim order (claim rank DESC, ready_at; CLAIM_RANK in todo-sql.ts): a higher
// rank, or the same rank and an earlier ready_at. Two range reads of todos_ready_queue_idx,
// whose key is that rank (rank above, then the same rank before this ready_at), each
// stopping at the cap, so a count walks at most AHEAD_CAP + 1 entries of each however long
// the queue is. Rows tied on both keys are not counted: the claim may take either first.
const AHEAD = `(SELECT count(*)::int FROM (
    (SELECT 1 FROM todos t WHERE t.endpoint_id = o.endpoint_id AND t.queue = o.queue
        AND ${CLAIM_RANK} > ${claimRankOf('o')} AND ${CLAIMABLE} LIMIT ${AHEAD_CAP + 1})
    UNION ALL
    (SELECT 1 FROM todos t WHERE t.endpoint_id = o.endpoint_id AND t.queue = o.queue
        AND ${CLAIM_RANK} = ${claimRankOf('o')} AND t.ready_at < o.ready_at AND ${CLAIMABLE} LIMIT ${AHEAD_CAP + 1})
    LIMIT ${AHEAD_CAP + 1}) a)`;

/**
 * The claim-order keys of these todos of the endpoint, with the count ahead of each ready
 * one on `countQueues` (the queues nothing holds back; an empty list counts none).
 */
export async function waitingKeys(
  db: Queryable,
  a: { endpointId: string; ids: string[]; countQueues: string[] },
): Promise<WaitingKeys[]> {
  const res = await db.query<WaitingKeys>(
    `SELECT o.id, o.priority, o.not_before, o.ready_at,
            coalesce(o.ready_at <= statement_timestamp(), false) AS ready,
            CASE WHEN o.ready_at <= statement_timestamp() AND o.queue = ANY($3::text[]) THEN ${AHEAD} END AS ahead
       FROM todos o
      WHERE o.endpoint_id = $1 AND o.id = ANY($2::text[])`,
    [a.endpointId, a.ids, a.countQueues],
  );
  return res.rows;
}
