// Reads for the board's queue lanes: per endpoint, queue and lane, the count and the
// most recent cards. Lanes are pending, claimed, done and failed (canceled todos sit in
// the failed lane: both are terminal until a human retries them). Synthetic todos
// (doorbell self-tests) are left out. Reads only; the board never writes through here.

import type { Queryable } from '../db/pool.js';
import type { TodoState } from '../domain/todo.js';
import { stateCounts } from './todo-counts.js';
import { CLAIM_RANK } from './todo-sql.js';

const DEAD = `(t.state = 'canceled' OR (t.state = 'failed' AND t.next_retry_at IS NULL))`;

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
  priority: number;
  lease_expires_at: Date | null;
  next_retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Lane counts from the maintained counters (store/todo-counts.ts): exact, one row per queue and state. */
export async function laneCounts(db: Queryable, endpointIds: string[]): Promise<LaneCount[]> {
  const byLane = new Map<string, LaneCount>();
  for (const c of await stateCounts(db, endpointIds)) {
    // Scheduled todos are not ready: no lane counts them until the promotion makes them pending.
    // A todo waiting on a human is in no lane either: the "Needs you" view lists it
    // (docs/board.md), and it comes back to pending when answered.
    if (c.state === 'scheduled' || c.state === 'waiting_on_human') continue;
    const lane: Lane = c.state === 'canceled' ? 'failed' : c.state;
    const key = `${c.endpoint_id}\u0000${c.queue}\u0000${lane}`;
    const row = byLane.get(key) ?? { endpoint_id: c.endpoint_id, queue: c.queue, lane, count: 0 };
    row.count += c.count;
    byLane.set(key, row);
  }
  return [...byLane.values()];
}

const CARD_COLUMNS = `t.endpoint_id, t.id, t.queue, t.title, t.state, t.attempt, t.max_attempts, t.priority,
  t.lease_expires_at, t.next_retry_at, t.created_at, t.updated_at`;

// One page per lane of queue q, each through the index that holds just that lane's rows
// in its order ($3 the page size). Pending, ready: in claim order (claim rank, then
// readiness: what claim_next takes next, and what a todo's "N ahead" counts), through the
// claim's own ready index, whose order needs no sort: ordered by readiness and id, a
// just-pushed backlog's stale statistics made the planner sort every pending todo of the
// queue (815 ms at 1M; docs/design/scale.md, "A pushed backlog"). Pending, not ready
// yet: by readiness, through todos_pending_age_idx. Claimed: the work in flight, every row. Done and dead: the terminal indexes, newest first. Retrying failures: those whose
// retry lies ahead, from the readiness index's non-pending rank (claims and retries, the
// work in flight; CLAIM_RANK, todo-sql.ts), which the condition must name for the index
// to serve it (a due one is claimable and shows once requeued).
const LANE_PAGES: Record<Lane, string[]> = {
  pending: [
    `SELECT ${CARD_COLUMNS}, 'pending' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.ready_at IS NOT NULL AND t.ready_at <= now()
        AND t.state = 'pending' AND NOT t.synthetic ORDER BY ${CLAIM_RANK} DESC, t.ready_at LIMIT $3`,
    `SELECT ${CARD_COLUMNS}, 'pending' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.ready_at > now()
        AND t.state = 'pending' AND NOT t.synthetic ORDER BY t.ready_at, t.id LIMIT $3`,
  ],
  claimed: [
    `SELECT ${CARD_COLUMNS}, 'claimed' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.state = 'claimed' AND NOT t.synthetic
      ORDER BY t.updated_at DESC, t.id LIMIT $3`,
  ],
  done: [
    `SELECT ${CARD_COLUMNS}, 'done' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND t.state = 'done' AND NOT t.synthetic
      ORDER BY t.updated_at DESC LIMIT $3`,
  ],
  failed: [
    `SELECT ${CARD_COLUMNS}, 'failed' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND ${DEAD} AND NOT t.synthetic
      ORDER BY t.updated_at DESC LIMIT $3`,
    `SELECT ${CARD_COLUMNS}, 'failed' AS lane FROM todos t
      WHERE t.endpoint_id = q.endpoint_id AND t.queue = q.queue AND ${CLAIM_RANK} = -101 AND t.ready_at > now()
        AND t.state = 'failed' AND NOT t.synthetic
      ORDER BY t.ready_at LIMIT $3`,
  ],
};

/**
 * A page of the newest `perLane` cards of every (endpoint, queue, lane) granted; pending
 * ready ones in claim order, every other lane most recently changed
 * first. Reads about `perLane` rows per lane, whatever the lane holds.
 */
export async function laneCards(
  db: Queryable,
  queues: Array<{ endpointId: string; queue: string }>,
  perLane: number,
): Promise<LaneCard[]> {
  const pages = Object.values(LANE_PAGES)
    .flat()
    .map((sql) => `(${sql})`)
    .join(' UNION ALL ');
  const res = await db.query<LaneCard>(
    `SELECT c.* FROM unnest($1::text[], $2::text[]) q(endpoint_id, queue) CROSS JOIN LATERAL (${pages}) c`,
    [queues.map((q) => q.endpointId), queues.map((q) => q.queue), perLane],
  );
  const byLane = new Map<string, LaneCard[]>();
  for (const card of res.rows) {
    const key = `${card.endpoint_id}\u0000${card.queue}\u0000${card.lane}`;
    byLane.set(key, [...(byLane.get(key) ?? []), card]);
  }
  return [...byLane.values()].flatMap((cards) => orderLane(cards[0]!.lane, cards).slice(0, perLane));
}

function orderLane(lane: Lane, cards: LaneCard[]): LaneCard[] {
  if (lane === 'pending') return cards;
  return cards.sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime() || (a.id < b.id ? -1 : 1));
}

/**
 * A cheap change detector over the counters: every transition a lane shows moves a todo
 * from one state to another, which appends a delta or changes a folded count of these
 * endpoints. (A change and its reverse folded between two polls look like no change; the
 * stream re-renders every so often anyway.) The queue rollup sweep's tick
 * (sweeps/rollups.ts) is in it too, so the charts redraw after each minute's sample.
 */
export async function liveFingerprint(db: Queryable, endpointIds: string[]): Promise<string> {
  const res = await db.query<{ fingerprint: string | null }>(
    `SELECT string_agg(x.k, ',' ORDER BY x.k) AS fingerprint FROM (
       SELECT endpoint_id || '/' || queue || '/' || state || '=' || n AS k FROM todo_counts
        WHERE endpoint_id = ANY($1::text[])
       UNION ALL
       SELECT 'deltas=' || count(*) || '/' || coalesce(sum(n), 0) FROM todo_count_deltas
        WHERE endpoint_id = ANY($1::text[])
       UNION ALL
       SELECT 'rollup=' || slot FROM sweep_ticks WHERE name = 'queue_rollup') x`,
    [endpointIds],
  );
  return res.rows[0]?.fingerprint ?? '';
}
