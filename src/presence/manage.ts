// Presence use cases: the self verbs (clock_in, clock_out, presence) acting on the
// caller's endpoint, and the owning human's operator writes (presence override with no
// 8 h cap, shift). Every write re-evaluates the effective presence at once and records a
// change (so a clock_out silences the doorbell immediately, and a clock_in owes a digest);
// time-driven changes (shift boundaries, override ends) are the presence sweep's.

import { z } from 'zod';
import { parseDuration } from '../config/duration.js';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { invalidArgument, notFound } from '../domain/errors.js';
import { dateTime } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { applyPresence, getPresenceRow, pendingCount, writeOverride, writeShift } from '../store/presence.js';
import {
  clockInChange,
  clockOutChange,
  DEFAULT_CLOCK_IN_SECONDS,
  effectivePresence,
  MAX_CLOCK_IN_SECONDS,
  type OverrideChange,
} from './evaluate.js';
import { parseShift } from './shift.js';

export interface PresenceDeps {
  db: Queryable;
}

export interface PresenceView {
  presence: 'in' | 'out';
  source: 'agent' | 'operator' | 'shift' | 'default';
  until: string | null;
  shift: string | null;
  pending: number;
}

async function current(deps: PresenceDeps, endpointId: string, lock = false) {
  const found = await getPresenceRow(deps.db, endpointId, { lock });
  if (!found) throw notFound('endpoint', endpointId);
  return found;
}

export async function presenceOf(deps: PresenceDeps, endpointId: string): Promise<PresenceView> {
  const { row, now } = await current(deps, endpointId);
  const effective = effectivePresence(row, now);
  return {
    presence: effective.presence,
    source: effective.source,
    until: effective.until?.toISOString() ?? null,
    shift: row.shift,
    pending: await pendingCount(deps.db, endpointId),
  };
}

/**
 * Runs a write and records the change it makes, with its reason, in one transaction: the
 * presence sweep reads either the row before the write (no change to record) or after
 * it (the change recorded), never the write alone, which it would record as its own
 * time-driven change (a clock_in's digest said `shift_start`).
 */
async function change(
  deps: PresenceDeps,
  endpointId: string,
  reason: string,
  write: (tx: Queryable, found: Awaited<ReturnType<typeof current>>) => Promise<void>,
): Promise<PresenceView> {
  return inTransaction(deps.db, async (db) => {
    await write(db, await current({ db }, endpointId, true));
    const view = await presenceOf({ db }, endpointId);
    await applyPresence(db, { endpointId, presence: view.presence, reason });
    return view;
  });
}

async function writeChange(db: Queryable, endpointId: string, next: OverrideChange, by: string) {
  if ('clear' in next) await writeOverride(db, { endpointId, presence: null, until: null, by: null });
  else await writeOverride(db, { endpointId, ...next.set, by });
}

/**
 * clock_in's arguments, as tools/list shows them; `for` also takes seconds, as a number.
 * ±Infinity (what JSON's 1e400 parses to) is a number of seconds out of range, as it was
 * with zod 3, whose numbers took it: zod 4's refuse it, so it becomes the largest finite
 * one of its sign first, and forSeconds answers it as it always did.
 */
export const clockInInput = z.strictObject({
  for: z
    .preprocess(
      (v) => (typeof v === 'number' && !Number.isFinite(v) && !Number.isNaN(v) ? Math.sign(v) * Number.MAX_VALUE : v),
      z.union([z.string(), z.number()]),
    )
    .optional()
    .describe('How long, e.g. "90m" or "2h" (1m–8h).'),
});
/** clock_out's arguments: none. */
export const clockOutInput = z.strictObject({});

function forSeconds(value: string | number | undefined): number {
  if (value === undefined) return DEFAULT_CLOCK_IN_SECONDS;
  const seconds = typeof value === 'number' ? value : (parseDuration(value) ?? NaN) / 1000;
  if (!Number.isFinite(seconds) || seconds < 60 || seconds > MAX_CLOCK_IN_SECONDS) {
    throw invalidArgument('for', 'must be a duration from 1m to 8h, such as "90m" or "2h" (or seconds)');
  }
  return Math.round(seconds);
}

export async function clockIn(deps: PresenceDeps, endpointId: string, input: unknown): Promise<PresenceView> {
  const data = parseInput(clockInInput, input);
  const seconds = forSeconds(data.for);
  return change(deps, endpointId, 'clock_in', (db, { row, now }) =>
    writeChange(db, endpointId, clockInChange(row.shift, now, seconds), 'agent'),
  );
}

export async function clockOut(deps: PresenceDeps, endpointId: string, input: unknown): Promise<PresenceView> {
  parseInput(clockOutInput, input);
  return change(deps, endpointId, 'clock_out', (db, { row, now }) =>
    writeChange(db, endpointId, clockOutChange(row.shift, now), 'agent'),
  );
}

export const operatorInput = z.strictObject({
  presence: z.enum(['in', 'out']),
  until: dateTime().nullable().optional(),
});

/** The owner sets an override (no 8 h cap); `until` null or absent: until cleared. */
export async function setPresence(
  deps: PresenceDeps,
  endpointId: string,
  humanId: string,
  input: unknown,
): Promise<PresenceView> {
  const data = parseInput(operatorInput, input);
  const until = data.until ? new Date(data.until) : null;
  return change(deps, endpointId, 'operator', async (db, { now }) => {
    if (until && until <= now) throw invalidArgument('until', 'must be in the future');
    await writeOverride(db, { endpointId, presence: data.presence, until, by: `operator:${humanId}` });
  });
}

export async function clearPresence(deps: PresenceDeps, endpointId: string): Promise<PresenceView> {
  return change(deps, endpointId, 'operator', (db) =>
    writeOverride(db, { endpointId, presence: null, until: null, by: null }),
  );
}

export const shiftInput = z.strictObject({ shift: z.string().nullable() });

export async function setShift(deps: PresenceDeps, endpointId: string, input: unknown): Promise<PresenceView> {
  const data = parseInput(shiftInput, input);
  if (data.shift !== null) parseShift(data.shift);
  return change(deps, endpointId, 'shift_start', (db) =>
    writeShift(db, endpointId, data.shift === null ? null : data.shift.trim()),
  );
}
