// Notify hooks: an endpoint's outbound webhook URLs, their secrets and health, and the
// statement that decides which ready transitions are delivered. Every statement is scoped
// by the endpoint; the secrets leave this module only for signing (hookSecrets).

import type { Queryable } from '../db/pool.js';
import { prepared } from '../db/prepared.js';
import { SENDER_VERIFIED } from './rings.js';

export interface NotifyHook {
  id: string;
  endpoint_id: string;
  url: string;
  queues: string[];
  ignore_presence: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
}

const COLUMNS = `h.id, h.endpoint_id, h.url, h.queues, h.ignore_presence, h.enabled, h.disabled_reason,
  h.consecutive_failures, h.last_attempt_at, h.last_status, h.last_error, h.created_at`;

/** Inserts a hook unless the endpoint already has `max`; null when it is at the ceiling. */
export async function insertNotifyHook(
  db: Queryable,
  a: {
    endpointId: string;
    id: string;
    url: string;
    queues: string[];
    ignorePresence: boolean;
    secret: string;
    max: number;
  },
): Promise<NotifyHook | null> {
  // The slot is taken by a conditional UPDATE of the endpoint's count, re-checked after any
  // concurrent create's row lock, so concurrent creates cannot pass the ceiling.
  const res = await db.query<NotifyHook>(
    `WITH slot AS (
       UPDATE endpoints SET notify_hooks_used = notify_hooks_used + 1
        WHERE id = $1 AND notify_hooks_used < $7 RETURNING id)
     INSERT INTO notify_hooks AS h (endpoint_id, id, url, queues, ignore_presence, secret)
     SELECT slot.id, $2, $3, $4, $5, $6 FROM slot
     RETURNING ${COLUMNS}`,
    [a.endpointId, a.id, a.url, a.queues, a.ignorePresence, a.secret, a.max],
  );
  return res.rows[0] ?? null;
}

export async function listNotifyHooks(db: Queryable, endpointId: string): Promise<NotifyHook[]> {
  const res = await db.query<NotifyHook>(
    `SELECT ${COLUMNS} FROM notify_hooks h WHERE h.endpoint_id = $1 ORDER BY h.created_at, h.id`,
    [endpointId],
  );
  return res.rows;
}

/**
 * A new secret; the old one keeps signing for `graceSeconds`, or with 0 no previous secret
 * is kept at all (one still in an earlier grace is dropped too); the hook is re-enabled.
 */
export async function rotateNotifyHook(
  db: Queryable,
  a: { endpointId: string; id: string; secret: string; graceSeconds: number },
): Promise<NotifyHook | null> {
  const res = await db.query<NotifyHook>(
    `UPDATE notify_hooks h SET
       prev_secret = CASE WHEN $4::int > 0 THEN h.secret END,
       prev_secret_expires_at = CASE WHEN $4::int > 0 THEN now() + make_interval(secs => $4::int) END,
       secret = $3, enabled = true, disabled_reason = NULL, consecutive_failures = 0
     WHERE h.endpoint_id = $1 AND h.id = $2 RETURNING ${COLUMNS}`,
    [a.endpointId, a.id, a.secret, a.graceSeconds],
  );
  return res.rows[0] ?? null;
}

export async function deleteNotifyHook(db: Queryable, endpointId: string, id: string): Promise<boolean> {
  const res = await db.query(
    `WITH gone AS (DELETE FROM notify_hooks WHERE endpoint_id = $1 AND id = $2 RETURNING endpoint_id)
     UPDATE endpoints e SET notify_hooks_used = e.notify_hooks_used - 1 FROM gone WHERE e.id = gone.endpoint_id`,
    [endpointId, id],
  );
  return (res.rowCount ?? 0) > 0;
}

/** The hook as a delivery attempt needs it: current URL, state and live secrets. */
export async function hookForAttempt(
  db: Queryable,
  endpointId: string,
  id: string,
): Promise<{ url: string; enabled: boolean; secrets: string[] } | null> {
  const res = await db.query<{ url: string; enabled: boolean; secrets: string[] }>(
    `SELECT url, enabled, array_remove(ARRAY[secret,
       CASE WHEN prev_secret_expires_at > now() THEN prev_secret END], NULL) AS secrets
     FROM notify_hooks WHERE endpoint_id = $1 AND id = $2`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

/** Records one finished delivery. A failure that reaches `disableAfter` in a row disables. */
export async function recordDelivery(
  db: Queryable,
  a: { endpointId: string; id: string; ok: boolean; status: number | null; error: string | null; disableAfter: number },
): Promise<{ disabled: boolean }> {
  const res = await db.query<{ disabled: boolean }>(
    `UPDATE notify_hooks h SET last_attempt_at = now(), last_status = $4, last_error = $5,
       consecutive_failures = CASE WHEN $3 THEN 0 ELSE h.consecutive_failures + 1 END,
       enabled = h.enabled AND ($3 OR h.consecutive_failures + 1 < $6),
       disabled_reason = CASE WHEN h.enabled AND NOT $3 AND h.consecutive_failures + 1 >= $6
         THEN 'consecutive_failures' ELSE h.disabled_reason END
     WHERE h.endpoint_id = $1 AND h.id = $2
     RETURNING (NOT h.enabled AND h.disabled_reason = 'consecutive_failures'
       AND h.consecutive_failures = $6) AS disabled`,
    [a.endpointId, a.id, a.ok, a.status, a.error, a.disableAfter],
  );
  return { disabled: res.rows[0]?.disabled ?? false };
}

export interface ReadyTransition {
  id: string;
  queue: string;
  title: string;
  kind: string | null;
  source: string | null;
  attempt: number;
  created_at: Date;
  updated_at: Date;
  reason: 'created' | 'requeued';
  /** The todo's stored trace context, which each delivery attempt's span links to. */
  traceparent: string | null;
}

/**
 * Decides the hook notifications of one queue's ready transitions: marks each pending,
 * sender-verified, non-synthetic todo whose latest ready transition (updated_at) has not
 * been decided yet, and returns it. Conditional on the mark under SKIP LOCKED, so of all
 * instances hearing the same todo_ready exactly one gets each transition. Only while the
 * endpoint has a hook (a transition while every hook is disabled or held is decided and
 * skipped, not kept for later), and only transitions newer than `maxAgeSeconds`.
 */
export async function claimReadyTransitions(
  db: Queryable,
  a: { endpointId: string; queue: string; limit: number; maxAgeSeconds: number },
): Promise<ReadyTransition[]> {
  // The limit is written into the text: a generic plan (db/prepared.ts) costs a LIMIT $n at
  // a tenth of the backlog and could sort all of it.
  if (!Number.isSafeInteger(a.limit) || a.limit < 1) throw new RangeError(`hook batch limit ${a.limit}`);
  const res = await db.query<ReadyTransition>(
    prepared(
      `WITH due AS (
       SELECT t.endpoint_id, t.id FROM todos t
        WHERE t.endpoint_id = $1 AND t.queue = $2 AND t.state = 'pending' AND t.ready_at IS NOT NULL AND NOT t.synthetic
          AND ${SENDER_VERIFIED}
          AND (t.hook_fired_at IS NULL OR t.hook_fired_at < t.updated_at)
          AND t.updated_at > now() - make_interval(secs => $3)
          AND EXISTS (SELECT 1 FROM notify_hooks h WHERE h.endpoint_id = $1)
        ORDER BY t.updated_at LIMIT ${a.limit} FOR UPDATE SKIP LOCKED)
     UPDATE todos t SET hook_fired_at = t.updated_at
       FROM due WHERE t.endpoint_id = due.endpoint_id AND t.id = due.id
     RETURNING t.id, t.queue, t.title, t.kind, t.source, t.attempt, t.created_at, t.updated_at, t.traceparent,
       CASE WHEN t.updated_at = t.created_at THEN 'created' ELSE 'requeued' END AS reason`,
      [a.endpointId, a.queue, a.maxAgeSeconds],
    ),
  );
  return res.rows;
}

export interface HookTargetRow {
  id: string;
  queues: string[];
  ignore_presence: boolean;
  created_at: Date;
  slug: string;
  presence_seen: 'in' | 'out';
}

/** The endpoint's enabled hooks with its slug and last decided presence. */
export async function enabledHooks(db: Queryable, endpointId: string): Promise<HookTargetRow[]> {
  const res = await db.query<HookTargetRow>(
    `SELECT h.id, h.queues, h.ignore_presence, h.created_at, e.slug, e.presence_seen
       FROM notify_hooks h JOIN endpoints e ON e.id = h.endpoint_id
      WHERE h.endpoint_id = $1 AND h.enabled AND e.revoked_at IS NULL ORDER BY h.created_at`,
    [endpointId],
  );
  return res.rows;
}

/**
 * (endpoint, queue) pairs with ready transitions nobody decided although the endpoint has
 * hooks: their todo_ready notice was lost (NOTIFY is a hint). For the hook sweep, which
 * acts for the server across endpoints, driven by the (small) hooks table: one probe of
 * the undecided-transition index (0012) per granted queue of an endpoint with hooks; transitions younger than
 * `minAgeSeconds` are left to the notice still in flight. The probe is a LATERAL ordered by
 * the index's last column with LIMIT 1 rather than EXISTS: with a just-pushed table's stale
 * statistics the semi-join walked every pending todo and joined the hooks after (0.5–0.8 s
 * a sweep with no hooks at all), and an unordered probe took another index or a sequential
 * scan (docs/design/scale.md, "A pushed backlog").
 */
export async function queuesWithUndecided(
  db: Queryable,
  a: { limit: number; minAgeSeconds: number; maxAgeSeconds: number },
): Promise<Array<{ endpoint_id: string; queue: string }>> {
  const res = await db.query<{ endpoint_id: string; queue: string }>(
    `SELECT h.endpoint_id, q.queue
       FROM (SELECT DISTINCT endpoint_id FROM notify_hooks) h
       JOIN endpoints e ON e.id = h.endpoint_id
       CROSS JOIN LATERAL unnest(e.queues) q(queue)
       CROSS JOIN LATERAL (
         SELECT 1 FROM todos t
          WHERE t.endpoint_id = h.endpoint_id AND t.queue = q.queue AND t.state = 'pending' AND t.ready_at IS NOT NULL AND NOT t.synthetic
            AND ${SENDER_VERIFIED} AND (t.hook_fired_at IS NULL OR t.hook_fired_at < t.updated_at)
            AND t.updated_at > now() - make_interval(secs => $3)
            AND t.updated_at < now() - make_interval(secs => $2)
          ORDER BY t.updated_at LIMIT 1) u
      LIMIT $1`,
    [a.limit, a.minAgeSeconds, a.maxAgeSeconds],
  );
  return res.rows;
}
