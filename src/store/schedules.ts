// Schedules and their audit (docs/design/schedules.md). Every read and write is scoped by
// endpoint_id, except the tick's claim of due rows, which acts for the server. Rows only:
// occurrences, diffs and permissions belong to src/schedules/.

import type { Queryable } from '../db/pool.js';

export interface ScheduleRow {
  endpoint_id: string;
  id: string;
  queue: string;
  cron: string;
  tz: string;
  title: string;
  body: string;
  payload: unknown;
  kind: string | null;
  priority: number;
  paused: boolean;
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_todo_id: string | null;
  last_missed: number;
  last_error: string | null;
  created_by_human_id: string;
  updated_by_human_id: string;
  created_at: Date;
  updated_at: Date;
}

/** What a create or an update writes: the template, the expression and the state. */
export interface ScheduleFields {
  queue: string;
  cron: string;
  tz: string;
  title: string;
  body: string;
  payload: unknown;
  kind: string | null;
  priority: number;
  paused: boolean;
  nextRunAt: Date | null;
}

const COLUMNS = `endpoint_id, id, queue, cron, tz, title, body, payload, kind, priority, paused, next_run_at,
  last_run_at, last_todo_id, last_missed, last_error, created_by_human_id, updated_by_human_id, created_at, updated_at`;

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

type WrittenSchedule = ScheduleFields & { endpointId: string; id: string; actorHumanId: string };

/** $1..$13 of the insert and the update, in one order. */
function fieldParams(a: WrittenSchedule): unknown[] {
  return [
    a.endpointId,
    a.id,
    a.queue,
    a.cron,
    a.tz,
    a.title,
    a.body,
    json(a.payload),
    a.kind,
    a.priority,
    a.paused,
    a.nextRunAt,
    a.actorHumanId,
  ];
}

export async function insertSchedule(db: Queryable, a: WrittenSchedule): Promise<ScheduleRow> {
  const res = await db.query<ScheduleRow>(
    `INSERT INTO schedules (endpoint_id, id, queue, cron, tz, title, body, payload, kind, priority, paused, next_run_at,
       created_by_human_id, updated_by_human_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $13)
     RETURNING ${COLUMNS}`,
    fieldParams(a),
  );
  return res.rows[0] as ScheduleRow;
}

/** The endpoint's schedules, oldest first (ids are ULIDs: id order is creation order). */
export async function listSchedules(db: Queryable, endpointId: string): Promise<ScheduleRow[]> {
  const res = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE endpoint_id = $1 ORDER BY id`, [
    endpointId,
  ]);
  return res.rows;
}

export async function getSchedule(db: Queryable, endpointId: string, id: string): Promise<ScheduleRow | null> {
  const res = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE endpoint_id = $1 AND id = $2`, [
    endpointId,
    id,
  ]);
  return res.rows[0] ?? null;
}

/** The row under its lock, so two writers (and the tick) change and audit it in turn. */
export async function lockSchedule(db: Queryable, endpointId: string, id: string): Promise<ScheduleRow | null> {
  const res = await db.query<ScheduleRow>(
    `SELECT ${COLUMNS} FROM schedules WHERE endpoint_id = $1 AND id = $2 FOR UPDATE`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

/** Rewrites the editable fields of a locked row. */
export async function updateSchedule(db: Queryable, a: WrittenSchedule): Promise<ScheduleRow> {
  const res = await db.query<ScheduleRow>(
    `UPDATE schedules SET queue = $3, cron = $4, tz = $5, title = $6, body = $7, payload = $8::jsonb, kind = $9,
       priority = $10, paused = $11, next_run_at = $12, updated_by_human_id = $13, updated_at = now()
      WHERE endpoint_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    fieldParams(a),
  );
  return res.rows[0] as ScheduleRow;
}

export async function deleteSchedule(db: Queryable, endpointId: string, id: string): Promise<boolean> {
  const res = await db.query(`DELETE FROM schedules WHERE endpoint_id = $1 AND id = $2`, [endpointId, id]);
  return (res.rowCount ?? 0) > 0;
}

export type AuditAction = 'create' | 'update' | 'pause' | 'resume' | 'delete';

export interface ScheduleAuditRow {
  id: number;
  schedule_id: string;
  action: AuditAction;
  actor_human_id: string;
  /** The actor's email, for people reading the audit; null once the human is deleted. */
  actor_email: string | null;
  /** `{field: {old, new}}` for each field the action changed. */
  changes: Record<string, { old: unknown; new: unknown }>;
  at: Date;
}

export async function insertScheduleAudit(
  db: Queryable,
  a: {
    endpointId: string;
    scheduleId: string;
    actorHumanId: string;
    action: AuditAction;
    changes: ScheduleAuditRow['changes'];
  },
): Promise<void> {
  await db.query(
    `INSERT INTO schedule_audit (schedule_id, endpoint_id, actor_human_id, action, changes)
     VALUES ($1, $2, $3, $4, $5::jsonb)`,
    [a.scheduleId, a.endpointId, a.actorHumanId, a.action, JSON.stringify(a.changes)],
  );
}

/** The newest audit rows of a schedule; they outlive it. */
export async function listScheduleAudit(
  db: Queryable,
  endpointId: string,
  scheduleId: string,
  limit: number,
): Promise<ScheduleAuditRow[]> {
  const res = await db.query<ScheduleAuditRow>(
    `SELECT a.id, a.schedule_id, a.action, a.actor_human_id, h.email AS actor_email, a.changes, a.at
       FROM schedule_audit a LEFT JOIN humans h ON h.id = a.actor_human_id
      WHERE a.endpoint_id = $1 AND a.schedule_id = $2 ORDER BY a.at DESC, a.id DESC LIMIT $3`,
    [endpointId, scheduleId, limit],
  );
  return res.rows;
}

/** A due schedule with what the tick checks of its endpoint. */
export interface DueSchedule extends ScheduleRow {
  endpoint_queues: string[];
  endpoint_active: boolean;
}

/**
 * Locks up to `limit` due schedules (next_run_at at or before `at`, the database clock
 * when null), skipping rows another tick holds, and answers the instant it judged by.
 * Locking re-checks the condition on the newest row version, so a schedule another
 * instance just advanced is not due here any more.
 */
export async function claimDueSchedules(
  db: Queryable,
  at: Date | null,
  limit: number,
): Promise<{ now: Date; due: DueSchedule[] }> {
  const res = await db.query<DueSchedule & { tick_now: Date }>(
    `WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now)
     SELECT s.*, e.queues AS endpoint_queues,
       (e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > clock.now)) AS endpoint_active,
       clock.now AS tick_now
       FROM clock, schedules s JOIN endpoints e ON e.id = s.endpoint_id
      WHERE NOT s.paused AND s.next_run_at <= clock.now
      ORDER BY s.next_run_at
      LIMIT $2
      FOR UPDATE OF s SKIP LOCKED`,
    [at, limit],
  );
  const now = res.rows[0]?.tick_now ?? at ?? new Date();
  return { now, due: res.rows.map(({ tick_now: _t, ...row }) => row) };
}

/** What one firing leaves on its (locked) schedule. */
export interface RunRecord {
  endpointId: string;
  id: string;
  /** null pauses the schedule: it has no further occurrence (or its zone is gone). */
  nextRunAt: Date | null;
  lastRunAt: Date;
  lastTodoId: string | null;
  lastMissed: number;
  lastError: string | null;
}

export async function recordRun(db: Queryable, r: RunRecord): Promise<void> {
  await db.query(
    `UPDATE schedules SET next_run_at = $3, paused = ($3::timestamptz IS NULL), last_run_at = $4, last_todo_id = $5,
       last_missed = $6, last_error = $7
      WHERE endpoint_id = $1 AND id = $2`,
    [r.endpointId, r.id, r.nextRunAt, r.lastRunAt, r.lastTodoId, r.lastMissed, r.lastError],
  );
}

/** Deletes a batch of the oldest audit entries past retention (schedule_audit_age_idx). */
export async function pruneScheduleAudit(
  db: Queryable,
  a: { olderThanSeconds: number; limit: number },
): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT id FROM schedule_audit WHERE at < now() - make_interval(secs => $1)
        ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM schedule_audit s USING old WHERE s.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}
