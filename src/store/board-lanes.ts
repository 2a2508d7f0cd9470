// Reads for the board's queue lanes: per endpoint, queue and lane, the count and the
// most recent cards. Lanes are pending, claimed, done and failed (canceled todos sit in
// the failed lane: both are terminal until a human retries them). Synthetic todos
// (doorbell self-tests) are left out. Reads only; the board never writes through here.

import type { Queryable } from '../db/pool.js';
import type { TodoState } from '../domain/todo.js';

export type Lane = 'pending' | 'claimed' | 'done' | 'failed';
export const LANES: readonly Lane[] = ['pending', 'claimed', 'done', 'failed'];

export interface LaneCount {
  endpoint_id: string;
  queue: string;
  lane: Lane;
  count: number;
}

export interface LaneCard {
  endpoint_id: string;
  id: string;
  queue: string;
  lane: Lane;
  title: string;
  state: TodoState;
  attempt: number;
  max_attempts: number;
  lease_expires_at: Date | null;
  next_retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const LANE_OF = `CASE WHEN state = 'canceled' THEN 'failed' ELSE state END`;

export async function laneCounts(db: Queryable, endpointIds: string[]): Promise<LaneCount[]> {
  const res = await db.query<LaneCount & { count: string }>(
    `SELECT endpoint_id, queue, ${LANE_OF} AS lane, count(*) AS count FROM todos
      WHERE endpoint_id = ANY($1::text[]) AND NOT synthetic GROUP BY 1, 2, 3`,
    [endpointIds],
  );
  return res.rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/**
 * The newest `perLane` cards of every (endpoint, queue, lane); pending oldest first
 * (the order claim_next takes them), every other lane most recently changed first.
 */
export async function laneCards(db: Queryable, endpointIds: string[], perLane: number): Promise<LaneCard[]> {
  const res = await db.query<LaneCard>(
    `SELECT endpoint_id, id, queue, lane, title, state, attempt, max_attempts, lease_expires_at, next_retry_at,
            created_at, updated_at
       FROM (SELECT t.*, ${LANE_OF} AS lane,
                    row_number() OVER (PARTITION BY endpoint_id, queue, ${LANE_OF}
                      ORDER BY CASE WHEN state = 'pending' THEN extract(epoch FROM created_at)
                                    ELSE -extract(epoch FROM updated_at) END, id) AS rn
               FROM todos t WHERE endpoint_id = ANY($1::text[]) AND NOT synthetic) ranked
      WHERE rn <= $2
      ORDER BY endpoint_id, queue, lane, rn`,
    [endpointIds, perLane],
  );
  return res.rows;
}

/**
 * A cheap change detector over the live rows: those with a ready_at (pending, claimed
 * with attempts left, failed with a retry due; the per-endpoint readiness index) and
 * claims on their last attempt (no ready_at; the claimed-lease index). Every transition
 * a lane shows moves a row into or out of that set (the count changes) or touches a row
 * in it (the newest updated_at changes). Terminal-only changes (a cancel of a dead
 * letter, retention) are not seen here: cancel notifies, and the stream re-renders
 * every so often anyway.
 */
export async function liveFingerprint(db: Queryable, endpointIds: string[]): Promise<string> {
  const res = await db.query<{ n: string; latest: Date | null }>(
    `SELECT count(*) AS n, max(updated_at) AS latest FROM (
       SELECT updated_at FROM todos WHERE endpoint_id = ANY($1::text[]) AND ready_at IS NOT NULL
       UNION ALL
       SELECT updated_at FROM todos
        WHERE state = 'claimed' AND ready_at IS NULL AND endpoint_id = ANY($1::text[])) live`,
    [endpointIds],
  );
  const row = res.rows[0];
  return `${row?.n ?? 0}:${row?.latest?.toISOString() ?? ''}`;
}
