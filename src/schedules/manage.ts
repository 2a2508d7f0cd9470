// Schedules as their endpoint's owner manages them (docs/design/schedules.md): create,
// list, show (with the audit tail), patch (any field, and pause / resume) and delete. The
// endpoint is resolved for the human first, so another human's endpoint or schedule
// answers not_found exactly like an unknown one. Each change and its audit row (who, what
// changed old → new) commit together, under the schedule's row lock. next_run_at is
// computed here from `now`: at create, on resume (from now: no burst of the paused
// time), and when the expression or zone changes.

import { Temporal } from 'temporal-polyfill';
import { inTransaction } from '../db/tx.js';
import { AppError, invalidArgument, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { parseInput } from '../domain/todo.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import type { Endpoint } from '../store/endpoints.js';
import { withQuota } from '../quotas/check.js';
import {
  deleteSchedule as deleteRow,
  getSchedule,
  insertSchedule,
  insertScheduleAudit,
  listScheduleAudit,
  listSchedules as listRows,
  lockSchedule,
  updateSchedule,
  type AuditAction,
  type ScheduleAuditRow,
  type ScheduleFields,
  type ScheduleRow,
} from '../store/schedules.js';
import { createScheduleInput, patchScheduleInput } from './input.js';
import { nextOccurrence } from './occurrence.js';

export type ScheduleDeps = EndpointDeps;
export type { ScheduleAuditRow, ScheduleRow };

/** How many audit rows a schedule's detail shows: a page of changes. */
export const DETAIL_AUDIT = 50;

/** The fields an audit row compares, in the order a reader expects them. */
const AUDITED = ['queue', 'cron', 'tz', 'title', 'body', 'payload', 'kind', 'priority', 'paused'] as const;
type Audited = (typeof AUDITED)[number];

function checkQueue(endpoint: Endpoint, queue: string): void {
  if (!endpoint.queues.includes(queue)) {
    throw invalidArgument(
      'queue',
      `"${queue}" is not one of ${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
    );
  }
}

/** The next run after `now`, or invalid_argument naming `cron` when it never fires. */
function nextRun(cron: string, tz: string, now: Date): Date {
  const next = nextOccurrence({ cron, tz }, Temporal.Instant.fromEpochMilliseconds(now.getTime()));
  if (next === null) throw invalidArgument('cron', `"${cron}" never fires (no matching date within 28 years)`);
  return new Date(next.epochMilliseconds);
}

function valuesOf(f: Pick<ScheduleFields, Audited>): Record<Audited, unknown> {
  return Object.fromEntries(AUDITED.map((k) => [k, f[k] ?? null])) as Record<Audited, unknown>;
}

/** `{field: {old, new}}` for each audited field that differs. */
function diff(before: Record<Audited, unknown> | null, after: Record<Audited, unknown> | null) {
  const changes: ScheduleAuditRow['changes'] = {};
  for (const k of AUDITED) {
    const old = before?.[k] ?? null;
    const now = after?.[k] ?? null;
    if (JSON.stringify(old) !== JSON.stringify(now)) changes[k] = { old, new: now };
  }
  return changes;
}

function activeEndpoint(endpoint: Endpoint, now: Date): void {
  if (endpoint.revoked_at || (endpoint.expires_at && endpoint.expires_at <= now)) {
    throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked or expired: it takes no new schedules`, {
      id: endpoint.id,
    });
  }
}

export async function createSchedule(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
  input: unknown,
  now: Date,
): Promise<{ schedule: ScheduleRow }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const data = parseInput(createScheduleInput, input);
  checkQueue(endpoint, data.queue);
  activeEndpoint(endpoint, now);
  const paused = data.paused ?? false;
  const next = nextRun(data.cron, data.tz, now);
  const fields: ScheduleFields = {
    queue: data.queue,
    cron: data.cron,
    tz: data.tz,
    title: data.title,
    body: data.body ?? '',
    payload: data.payload ?? null,
    kind: data.kind ?? null,
    priority: data.priority ?? 0,
    paused,
    nextRunAt: paused ? null : next,
  };
  const schedule = await withQuota(deps.db, deps, 'schedules', { endpointId: endpoint.id }, async (tx) => {
    const row = await insertSchedule(tx, {
      ...fields,
      endpointId: endpoint.id,
      id: newId('sc'),
      actorHumanId: humanId,
    });
    await insertScheduleAudit(tx, {
      endpointId: endpoint.id,
      scheduleId: row.id,
      actorHumanId: humanId,
      action: 'create',
      changes: diff(null, valuesOf(fields)),
    });
    return row;
  });
  return { schedule };
}

export async function listSchedules(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
): Promise<{ schedules: ScheduleRow[] }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return { schedules: await listRows(deps.db, endpoint.id) };
}

export async function showSchedule(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
  id: string,
): Promise<{ schedule: ScheduleRow; audit: ScheduleAuditRow[] }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const schedule = await getSchedule(deps.db, endpoint.id, id);
  if (!schedule) throw notFound('schedule', id);
  return { schedule, audit: await listScheduleAudit(deps.db, endpoint.id, id, DETAIL_AUDIT) };
}

export async function scheduleAudit(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
  id: string,
): Promise<{ audit: ScheduleAuditRow[] }> {
  const { audit } = await showSchedule(deps, humanId, ref, id);
  return { audit };
}

/** The action an audit row names: a change of `paused` alone is a pause or a resume. */
function actionOf(changes: ScheduleAuditRow['changes']): AuditAction {
  const keys = Object.keys(changes);
  if (keys.length === 1 && keys[0] === 'paused') return changes.paused?.new ? 'pause' : 'resume';
  return 'update';
}

export async function patchSchedule(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
  id: string,
  input: unknown,
  now: Date,
): Promise<{ schedule: ScheduleRow }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const patch = parseInput(patchScheduleInput, input);
  if (patch.queue !== undefined) checkQueue(endpoint, patch.queue);
  const schedule = await inTransaction(deps.db, async (tx) => {
    const row = await lockSchedule(tx, endpoint.id, id);
    if (!row) throw notFound('schedule', id);
    const fields: ScheduleFields = {
      queue: patch.queue ?? row.queue,
      cron: patch.cron ?? row.cron,
      tz: patch.tz ?? row.tz,
      title: patch.title ?? row.title,
      body: patch.body ?? row.body,
      payload: patch.payload === undefined ? row.payload : patch.payload,
      kind: patch.kind === undefined ? row.kind : patch.kind,
      priority: patch.priority ?? row.priority,
      paused: patch.paused ?? row.paused,
      nextRunAt: row.next_run_at,
    };
    const changes = diff(valuesOf(row), valuesOf(fields));
    if (Object.keys(changes).length === 0) return row;
    // A new expression or zone, or a resume, counts from now; a pause forgets the next run.
    const retimed = 'cron' in changes || 'tz' in changes || (row.paused && !fields.paused);
    const next = nextRun(fields.cron, fields.tz, now);
    fields.nextRunAt = fields.paused ? null : retimed ? next : row.next_run_at;
    if (!fields.paused) activeEndpoint(endpoint, now);
    const updated = await updateSchedule(tx, { ...fields, endpointId: endpoint.id, id, actorHumanId: humanId });
    await insertScheduleAudit(tx, {
      endpointId: endpoint.id,
      scheduleId: id,
      actorHumanId: humanId,
      action: actionOf(changes),
      changes,
    });
    return updated;
  });
  return { schedule };
}

export async function deleteSchedule(
  deps: ScheduleDeps,
  humanId: string,
  ref: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  await inTransaction(deps.db, async (tx) => {
    const row = await lockSchedule(tx, endpoint.id, id);
    if (!row || !(await deleteRow(tx, endpoint.id, id))) throw notFound('schedule', id);
    await insertScheduleAudit(tx, {
      endpointId: endpoint.id,
      scheduleId: id,
      actorHumanId: humanId,
      action: 'delete',
      changes: diff(valuesOf(row), null),
    });
  });
  return { id, deleted: true };
}
