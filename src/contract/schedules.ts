// Schedules on the wire (docs/api.md, "Schedules"; docs/design/api-contract.md): a
// recurring todo's template, expression and state, and its audit.

import { z } from 'zod';
import { time } from './shapes.js';

/** A schedule (src/store/schedules.ts, ScheduleRow). */
export const scheduleOut = z.object({
  endpoint_id: z.string(),
  id: z.string().describe('`sc_…`'),
  queue: z.string(),
  cron: z.string(),
  tz: z.string(),
  title: z.string(),
  body: z.string(),
  payload: z.unknown(),
  kind: z.string().nullable(),
  priority: z.number().int(),
  paused: z.boolean(),
  next_run_at: time.nullable(),
  last_run_at: time.nullable(),
  last_todo_id: z.string().nullable(),
  last_missed: z.number().int(),
  last_error: z.string().nullable(),
  created_by_human_id: z.string(),
  updated_by_human_id: z.string(),
  created_at: time,
  updated_at: time,
});

/** One change to a schedule (src/store/schedules.ts, ScheduleAuditRow). */
export const scheduleAuditOut = z.object({
  id: z.number().int(),
  schedule_id: z.string(),
  action: z.enum(['create', 'update', 'pause', 'resume', 'delete']),
  actor_human_id: z.string(),
  actor_email: z.string().nullable(),
  changes: z.record(z.string(), z.object({ old: z.unknown(), new: z.unknown() })),
  at: time,
});

export const scheduleOneOut = z.object({ schedule: scheduleOut });
export const scheduleListOut = z.object({ schedules: z.array(scheduleOut) });
export const scheduleShowOut = z.object({ schedule: scheduleOut, audit: z.array(scheduleAuditOut) });
export const scheduleAuditListOut = z.object({ audit: z.array(scheduleAuditOut) });
export const scheduleDeletedOut = z.object({ id: z.string(), deleted: z.literal(true) });
