// Who the doorbell may ring (docs/design/doorbell-acknowledgement.md, "Who is rung"), as SQL
// over alias s (mcp_sessions) for the ring statements of store/rings.ts: a session that
// listens (declared claude/channel, stream open, endpoint present) and, outside ring-on-
// attach, is idle — it holds no live claim and has no unanswered ring. One ring per idle
// agent, not one per todo: an agent drains the queue with claim_next after its first ring.

import type { Queryable } from '../db/pool.js';
import { ENDPOINT_PRESENT } from './presence-sql.js';

/** A live session whose stream is open, that declared claude/channel (0033), of a present endpoint. */
export const LISTENING = `s.closed_at IS NULL AND s.stream_open AND s.channel AND ${ENDPOINT_PRESENT}`;

/**
 * Holds no live claim: the endpoint's claimed todos (todos_claimed_idx, work in flight) are
 * read once and hashed, whatever the number of sessions. A lapsed lease is no claim: the
 * reaper is about to hand the todo back.
 */
export const NO_CLAIM_IN_FLIGHT = (endpoint: string) =>
  `s.id NOT IN (SELECT c.owner_session_id FROM todos c
     WHERE c.endpoint_id = ${endpoint} AND c.state = 'claimed' AND c.lease_expires_at > now()
       AND c.owner_session_id IS NOT NULL)`;

/**
 * Has no unanswered ring: its last ring (the todo and its claim count, stamped by the ring
 * statement, 0035_ring_answered.sql) is past the ack window, or its todo is seen claimed
 * since (by any session: the claim-as-ack of the ring rows, read from the todo itself
 * because the rows are written after delivery) or no longer pending. ack_doorbell and a
 * settled claim clear the stamp. One todo read by primary key per session.
 *
 * Asked as "is the answer visible", never "is the unanswered todo visible": a pass that
 * waited on the session's row lock while another pass rang it re-reads the row (the ring
 * statement locks it) but keeps its older snapshot, which may not hold the todo just rung.
 * Unseen, that todo counts as unanswered, so the waiting pass rings the session no more.
 */
export const NO_RING_UNANSWERED = (windowSeconds: string) =>
  `(s.ring_todo_id IS NULL OR s.last_rung_at <= now() - make_interval(secs => ${windowSeconds})
     OR EXISTS (SELECT 1 FROM todos x WHERE x.endpoint_id = s.endpoint_id AND x.id = s.ring_todo_id
                 AND NOT (x.state = 'pending' AND x.claims = s.ring_claims)))`;

/**
 * A session settled a claim: it answered any ring older than `graceSeconds` (it was idle
 * when rung, so that claim came after the ring). Clears the stamp so the next work rings it.
 */
export async function answerRing(
  db: Queryable,
  a: { endpointId: string; sessionId: string; graceSeconds: number },
): Promise<void> {
  await db.query(
    `UPDATE mcp_sessions SET ring_todo_id = NULL
      WHERE endpoint_id = $1 AND id = $2 AND ring_todo_id IS NOT NULL
        AND last_rung_at < now() - make_interval(secs => $3::float8)`,
    [a.endpointId, a.sessionId, a.graceSeconds],
  );
}
