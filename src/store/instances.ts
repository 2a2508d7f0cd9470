// Instance liveness (migration 0009): each serve process beats its `instances` row; a row
// whose beat is older than the dead-after threshold is a process that died without a
// clean shutdown. Finding one closes the streams it held and un-rings the todos whose
// latest ring went to it, in one transaction, so the caller can ring them again.

import type { Queryable } from '../db/pool.js';

export interface InstanceInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
}

/**
 * Upserts this instance's row with a fresh beat. True when the row had to be inserted:
 * at start, or because another instance found this one dead and deleted it.
 */
export async function beat(db: Queryable, i: InstanceInfo): Promise<boolean> {
  const res = await db.query<{ inserted: boolean }>(
    `INSERT INTO instances (id, host, pid, version) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET last_beat_at = now(), host = EXCLUDED.host, pid = EXCLUDED.pid,
         version = EXCLUDED.version
     RETURNING (xmax = 0) AS inserted`,
    [i.id, i.host, i.pid, i.version],
  );
  return res.rows[0]?.inserted === true;
}

/** A clean shutdown: this instance is gone (its streams were marked closed already). */
export async function removeInstance(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM instances WHERE id = $1', [id]);
}

export interface DeadInstances {
  /** Instances found dead (their rows are deleted). */
  instances: string[];
  /** Sessions whose stream was on a dead instance, now marked closed. */
  sessions: Array<{ endpointId: string; sessionId: string }>;
  /** Queues holding pending todos whose latest ring went to a dead instance, now due a ring again. */
  queues: Array<{ endpointId: string; queue: string }>;
}

/**
 * Finds instances (other than `self`) whose last beat is older than `deadAfterMs` and
 * deletes their rows (rows another transaction is already reaping are skipped), then
 * releases what they held.
 */
export async function reapDeadInstances(
  tx: Queryable,
  deadAfterMs: number,
  self: string,
  marginMs: number,
): Promise<DeadInstances> {
  const dead = await tx.query<DeadRow>(
    `DELETE FROM instances WHERE id IN (
       SELECT id FROM instances
        WHERE last_beat_at < now() - make_interval(secs => $1::double precision / 1000) AND id <> $2
        FOR UPDATE SKIP LOCKED)
     RETURNING id, last_beat_at`,
    [deadAfterMs, self],
  );
  return releaseInstances(tx, dead.rows, marginMs);
}

/**
 * At start: a row under this instance's own id is left by an earlier process with the same
 * SWITCHBOARD_INSTANCE_ID that did not shut down cleanly (a clean shutdown deletes it).
 * What that process held is released like a dead instance's. Runs before the first beat.
 */
export async function reapPredecessor(tx: Queryable, id: string, marginMs: number): Promise<DeadInstances> {
  const res = await tx.query<DeadRow>('DELETE FROM instances WHERE id = $1 RETURNING id, last_beat_at', [id]);
  return releaseInstances(tx, res.rows, marginMs);
}

interface DeadRow {
  id: string;
  last_beat_at: Date;
}

/**
 * Marks the open streams of these (dead) instances closed and makes the pending todos
 * rung through them since shortly before their last beat due a ring again (last_ringed_at
 * cleared, the lost ring's budget given back). A ring sent earlier was written by an
 * instance still beating, to a stream that was open; it was delivered or counted as a
 * failed write, and the heartbeat re-ring covers its todo. So the sweep touches the rings
 * of the instance's last moments, not every todo it ever rang. Both statements read
 * partial indexes (0012): open streams by instance, rung pending todos by instance and time.
 */
async function releaseInstances(tx: Queryable, dead: DeadRow[], marginMs: number): Promise<DeadInstances> {
  const instances = dead.map((d) => d.id);
  if (instances.length === 0) return { instances, sessions: [], queues: [] };
  const sessions = await tx.query<{ endpoint_id: string; id: string }>(
    `UPDATE mcp_sessions SET stream_open = false
      WHERE instance = ANY($1::text[]) AND stream_open AND closed_at IS NULL
      RETURNING endpoint_id, id`,
    [instances],
  );
  // Only todos still pending: claimed work needs no ring. The ring went to the dead
  // instance (written or not: a written one reached a stream that is gone too).
  const queues = await tx.query<{ endpoint_id: string; queue: string }>(
    `WITH unrung AS (
       UPDATE todos SET last_ringed_at = NULL, last_rung_instance = NULL,
           ring_attempts = greatest(ring_attempts - 1, 0)
         FROM unnest($1::text[], $2::timestamptz[]) d(id, last_beat_at)
        WHERE todos.state = 'pending' AND todos.last_rung_instance = d.id
          AND todos.last_ringed_at > d.last_beat_at - make_interval(secs => $3::double precision / 1000)
        RETURNING todos.endpoint_id, todos.queue)
     SELECT DISTINCT endpoint_id, queue FROM unrung`,
    [instances, dead.map((d) => d.last_beat_at), marginMs],
  );
  return {
    instances,
    sessions: sessions.rows.map((r) => ({ endpointId: r.endpoint_id, sessionId: r.id })),
    queues: queues.rows.map((r) => ({ endpointId: r.endpoint_id, queue: r.queue })),
  };
}
