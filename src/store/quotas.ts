// The counts the quotas compare (src/quotas/): what one human owns of each kind, and the
// live todos of one endpoint. Each owned count stops at the quota (`LIMIT`), so a check
// reads at most quota rows through the owner's index, never a table. The live-todo count
// reads the maintained counters (store/todo-counts.ts), never the todos: it is on the
// create path. `lockHuman` serialises one human's quota-checked creates (not their other
// writes: FOR NO KEY UPDATE leaves the foreign-key checks of inserts that name the human
// free), so a check and its insert are exact under concurrent creates.

import type { Queryable } from '../db/pool.js';
import { planGeneric } from '../db/prepared.js';
import type { QuotaKind } from '../domain/quotas.js';

export type OwnedKind = Exclude<QuotaKind, 'liveTodosPerEndpoint'>;

const OWNED: Record<OwnedKind, string> = {
  endpoints: `SELECT 1 FROM endpoints WHERE human_id = $1`,
  apiTokens: `SELECT 1 FROM api_tokens WHERE human_id = $1 AND revoked_at IS NULL
                 AND (expires_at IS NULL OR expires_at > now())`,
  webhooks: `SELECT 1 FROM endpoints e JOIN webhooks w ON w.endpoint_id = e.id WHERE e.human_id = $1`,
  notifyHooks: `SELECT 1 FROM endpoints e JOIN notify_hooks n ON n.endpoint_id = e.id WHERE e.human_id = $1`,
  schedules: `SELECT 1 FROM endpoints e JOIN schedules s ON s.endpoint_id = e.id WHERE e.human_id = $1`,
};

/** Locks the human's row for a quota-checked create; false: no such human. */
export async function lockHuman(db: Queryable, humanId: string): Promise<boolean> {
  const res = await db.query(`SELECT 1 FROM humans WHERE id = $1 FOR NO KEY UPDATE`, [humanId]);
  return res.rowCount === 1;
}

/** Locks the row of the human owning the endpoint; their id, or null for no such endpoint. */
export async function lockOwnerOf(db: Queryable, endpointId: string): Promise<string | null> {
  const res = await db.query<{ id: string }>(
    `SELECT h.id FROM humans h JOIN endpoints e ON e.human_id = h.id WHERE e.id = $1 FOR NO KEY UPDATE OF h`,
    [endpointId],
  );
  return res.rows[0]?.id ?? null;
}

/** How many of `kind` the human owns, counted up to `upTo`. */
export async function countOwned(db: Queryable, kind: OwnedKind, humanId: string, upTo: number): Promise<number> {
  const res = await db.query<{ n: string }>(`SELECT count(*) AS n FROM (${OWNED[kind]} LIMIT $2) o`, [humanId, upTo]);
  return Number(res.rows[0]?.n ?? 0);
}

/** The states a todo holds room in: it is still to be done. */
const LIVE = `('pending', 'scheduled', 'claimed', 'waiting_on_human')`;

/**
 * The endpoint's live (pending, scheduled, claimed, waiting on a human) todos, from the maintained counters:
 * the folded counts plus the deltas not folded yet (store/todo-counts.ts), both through
 * the endpoint's index, as one SQL expression of the endpoint parameter `endpoint` (the
 * coalesced create reads it inside its insert, store/todo-rows.ts). Read without a lock,
 * so concurrent creates may overshoot the quota by their number; a lock here would
 * serialise every create of the endpoint.
 */
export const liveTodoCountSql = (endpoint: string) => `(SELECT coalesce(sum(n), 0) FROM (
       SELECT n FROM todo_counts WHERE endpoint_id = ${endpoint} AND state IN ${LIVE}
       UNION ALL
       SELECT (CASE WHEN to_state IN ${LIVE} THEN n ELSE 0 END) - (CASE WHEN from_state IN ${LIVE} THEN n ELSE 0 END)
         FROM todo_count_deltas WHERE endpoint_id = ${endpoint}) c)`;

const LIVE_TODO_COUNT = `SELECT ${liveTodoCountSql('$1')} AS n`;

export async function liveTodoCount(db: Queryable, endpointId: string): Promise<number> {
  const res = await db.query<{ n: string | null }>(
    planGeneric({ name: 'live_todo_count', text: LIVE_TODO_COUNT, values: [endpointId] }),
  );
  return Number(res.rows[0]?.n ?? 0);
}
