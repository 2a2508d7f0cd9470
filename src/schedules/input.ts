// What a schedule is made of, as the operator API, the CLI (through the API) and the board
// send it (docs/design/schedules.md, "Wire shapes"): one zod schema for a create and one
// for a patch. The todo fields reuse the create schema's rules (src/domain/todo.ts), so a
// schedule holds nothing its todos could not; `cron` and `tz` are checked here, by field.

import { z } from 'zod';
import { createTodoInput } from '../domain/todo.js';
import { unknownZone, zoneId } from '../domain/zones.js';
import { checkCron } from './occurrence.js';

/** The `priority` bounds of migrations/0014_work_model.sql: higher is claimed first. */
export const PRIORITY_BOUNDS = { min: -100, max: 100 } as const;

const cron = z
  .string()
  .max(200, 'must be at most 200 characters')
  .check((ctx) => {
    const check = checkCron(ctx.value);
    if (!check.ok) ctx.issues.push({ code: 'custom', message: check.message, input: ctx.value });
  })
  .transform((s) => s.trim().replace(/\s+/g, ' '))
  .describe('Five fields: minute hour day-of-month month day-of-week, e.g. `0 9 * * 1-5`.');

const tz = z
  .string()
  .max(64, 'must be at most 64 characters')
  .check((ctx) => {
    if (zoneId(ctx.value) === undefined) {
      ctx.issues.push({
        code: 'custom',
        message: unknownZone(ctx.value),
        input: ctx.value,
      });
    }
  })
  .transform((s) => zoneId(s) ?? s)
  .describe('The IANA zone the expression is read in, e.g. `Europe/Berlin`.');

const priority = z
  .number()
  .int()
  .min(PRIORITY_BOUNDS.min)
  .max(PRIORITY_BOUNDS.max)
  .describe('Priority of the todos it makes, −100…100, higher first (default 0).');

const todo = createTodoInput.shape;

export const createScheduleInput = z.strictObject({
  queue: todo.queue,
  cron,
  tz,
  title: todo.title,
  body: todo.body,
  payload: todo.payload,
  kind: todo.kind,
  priority: priority.optional(),
  paused: z.boolean().optional().describe('Created paused: it makes nothing until resumed.'),
});
export type CreateScheduleInput = z.infer<typeof createScheduleInput>;

/** Any field of a create, each optional; `kind` and `payload` may be null to clear them. */
export const patchScheduleInput = z
  .strictObject({
    queue: todo.queue.optional(),
    cron: cron.optional(),
    tz: tz.optional(),
    title: todo.title.optional(),
    body: todo.body,
    payload: todo.payload.unwrap().nullable().optional(),
    kind: todo.kind.unwrap().nullable().optional(),
    priority: priority.optional(),
    paused: z.boolean().optional().describe('true pauses; false resumes from now (no burst).'),
  })
  .refine((p) => Object.keys(p).length > 0, 'must change at least one field');
export type PatchScheduleInput = z.infer<typeof patchScheduleInput>;
