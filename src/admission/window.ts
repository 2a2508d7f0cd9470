// Window arithmetic for admission control (docs/design/admission.md, "Windows"): the
// window spec, its validation, and where the window containing an instant starts and
// where the next one starts, walked on the policy zone's wall clock. Pure: the instant is
// always passed in; no clock reads, no I/O, no module state. It does not decide admission
// (limits, in-flight, reasons), read policies or charge counters: those belong to the
// claim path and the store.

import { Temporal } from 'temporal-polyfill';
import { AppError } from '../domain/errors.js';
import { isZoneName, unknownZone, zoneId } from '../domain/zones.js';

export const PERIODS = ['hour', 'day', 'week'] as const;
export type Period = (typeof PERIODS)[number];

/** The `window_weekday` CHECK values (docs/design/admission.md), in ISO order (Mon = 1 … Sun = 7). */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * A declared window: `window_period`, `window_tz`, `window_start` and, for a week only,
 * `window_weekday`. `start` is local `HH:MM`; for an hour window only its minutes count
 * (every hour at :MM), as `07:30` and `00:30` describe the same hourly boundaries.
 */
export type WindowSpec =
  | { period: 'hour' | 'day'; tz: string; start: string }
  | { period: 'week'; tz: string; start: string; weekday: Weekday };

export type WindowField = 'window' | 'period' | 'tz' | 'start' | 'weekday';

/** `admission_unavailable`: the zone is not in the zone database; fail closed, never admit. */
export type WindowProblem = {
  field: WindowField;
  reason: 'missing' | 'invalid' | 'admission_unavailable';
  message: string;
};

export type ParsedWindow = { ok: true; spec: WindowSpec } | { ok: false; problems: WindowProblem[] };

/** The CHECK on `window_start` (migrations/0005_admission.sql), verbatim. */
const START_PATTERN = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

/**
 * How many wall-clock slots a search may step over. One or two steps suffice for every
 * real zone; a gap that swallows many slots (Pacific/Apia skipped a whole day in 2011)
 * resolves them all to one instant and still ends within a day of hourly slots. Too small
 * would reject such a day; too large would only slow a bug's discovery.
 */
const MAX_STEPS = 60;

/** Validates a window as the schema's CHECKs do; lists every problem, named by field. */
export function parseWindow(input: unknown): ParsedWindow {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return fail([{ field: 'window', reason: 'invalid', message: 'window must be an object' }]);
  }
  const raw = input as Record<string, unknown>;
  const problems: WindowProblem[] = [];
  const period = parsePeriod(raw.period, problems);
  const tz = parseZone(raw.tz, problems);
  const start = parseStart(raw.start, problems);
  const weekday = parseWeekday(raw.weekday, period, problems);
  if (problems.length > 0 || period === undefined || tz === undefined || start === undefined) return fail(problems);
  if (period === 'week') {
    if (weekday === undefined) return fail([{ field: 'weekday', reason: 'missing', message: 'weekday is required' }]);
    return { ok: true, spec: { period, tz, start, weekday } };
  }
  return { ok: true, spec: { period, tz, start } };
}

function fail(problems: WindowProblem[]): ParsedWindow {
  return { ok: false, problems };
}

function parsePeriod(value: unknown, problems: WindowProblem[]): Period | undefined {
  if (value === undefined || value === null) {
    problems.push({ field: 'period', reason: 'missing', message: 'period is required: hour, day or week' });
  } else if (typeof value !== 'string' || !(PERIODS as readonly string[]).includes(value)) {
    problems.push({ field: 'period', reason: 'invalid', message: 'period must be hour, day or week' });
  } else {
    return value as Period;
  }
  return undefined;
}

function parseZone(value: unknown, problems: WindowProblem[]): string | undefined {
  if (value === undefined || value === null || value === '') {
    problems.push({ field: 'tz', reason: 'missing', message: 'tz is required: an IANA zone such as Europe/Berlin' });
    return undefined;
  }
  const id = typeof value === 'string' ? zoneId(value) : undefined;
  if (id === undefined) {
    // Not a zone name at all is invalid; a name this zone database lacks fails closed.
    const reason = isZoneName(value) ? 'admission_unavailable' : 'invalid';
    problems.push({ field: 'tz', reason, message: unknownZone(value) });
  }
  return id;
}

function parseStart(value: unknown, problems: WindowProblem[]): string | undefined {
  if (value === undefined || value === null) {
    problems.push({ field: 'start', reason: 'missing', message: 'start is required: local HH:MM' });
  } else if (typeof value !== 'string' || !START_PATTERN.test(value)) {
    problems.push({ field: 'start', reason: 'invalid', message: 'start must be HH:MM, 00:00 to 23:59' });
  } else {
    return value;
  }
  return undefined;
}

function parseWeekday(value: unknown, period: Period | undefined, problems: WindowProblem[]): Weekday | undefined {
  const absent = value === undefined || value === null;
  if (period === 'week' && absent) {
    problems.push({ field: 'weekday', reason: 'missing', message: 'a week window needs a weekday: Mon … Sun' });
  } else if (period !== undefined && period !== 'week' && !absent) {
    problems.push({ field: 'weekday', reason: 'invalid', message: 'only a week window has a weekday' });
  } else if (!absent && (typeof value !== 'string' || !(WEEKDAYS as readonly string[]).includes(value))) {
    problems.push({ field: 'weekday', reason: 'invalid', message: 'weekday must be one of Mon … Sun' });
  } else if (!absent) {
    return value as Weekday;
  }
  return undefined;
}

export type WindowBounds = { start: Temporal.Instant; next: Temporal.Instant };

/**
 * The window containing `instant`: `start <= instant < next`. An instant exactly at a
 * boundary belongs to the window that starts there. Throws `admission_unavailable` when
 * the zone is not (or no longer) in the zone database.
 */
export function windowBounds(spec: WindowSpec, instant: Temporal.Instant): WindowBounds {
  const step = STEPS[spec.period];
  let slot = floorSlot(spec, wallClock(instant, spec.tz));
  let start = resolveWall(slot, spec.tz);
  for (let i = 0; Temporal.Instant.compare(start, instant) > 0; i++) {
    guard(i, spec);
    slot = slot.subtract(step);
    start = resolveWall(slot, spec.tz);
  }
  for (let i = 0; ; i++) {
    guard(i, spec);
    const following = slot.add(step);
    const next = resolveWall(following, spec.tz);
    if (Temporal.Instant.compare(next, instant) > 0) return { start, next };
    slot = following;
    start = next;
  }
}

/** The absolute instant at which the window containing `instant` started (its key). */
export function windowStart(spec: WindowSpec, instant: Temporal.Instant): Temporal.Instant {
  return windowBounds(spec, instant).start;
}

/** The instant the next window starts: the exact `next_eligible_at` of an exhausted window. */
export function nextBoundary(spec: WindowSpec, instant: Temporal.Instant): Temporal.Instant {
  return windowBounds(spec, instant).next;
}

/**
 * "Resets at" for the board's budget strip: the next boundary as wall-clock text in the
 * policy's zone and, when given and known, the viewer's zone. An unknown viewer zone is
 * the viewer's problem, not the policy's: it yields null, never an error.
 */
export function resetsAt(
  spec: WindowSpec,
  instant: Temporal.Instant,
  viewerTz?: string,
): { at: Temporal.Instant; policy: string; viewer: string | null } {
  const at = nextBoundary(spec, instant);
  const viewerId = viewerTz === undefined ? undefined : zoneId(viewerTz);
  return {
    at,
    policy: formatWallClock(at, spec.tz),
    viewer: viewerId === undefined ? null : formatWallClock(at, viewerId),
  };
}

/** `2026-03-08 03:00 -04:00 America/New_York`: local date, time, offset and zone. */
export function formatWallClock(instant: Temporal.Instant, tz: string): string {
  const local = zoned(instant, tz);
  const wall = local.toPlainDateTime().toString({ smallestUnit: 'minute' }).replace('T', ' ');
  return `${wall} ${local.offset} ${local.timeZoneId}`;
}

const STEPS: Record<Period, Temporal.DurationLike> = { hour: { hours: 1 }, day: { days: 1 }, week: { weeks: 1 } };

function zoned(instant: Temporal.Instant, tz: string): Temporal.ZonedDateTime {
  try {
    return instant.toZonedDateTimeISO(tz);
  } catch (cause) {
    throw unavailable(tz, cause);
  }
}

function wallClock(instant: Temporal.Instant, tz: string): Temporal.PlainDateTime {
  return zoned(instant, tz).toPlainDateTime();
}

/** The latest declared wall-clock boundary at or before `wall` (before DST resolution). */
function floorSlot(spec: WindowSpec, wall: Temporal.PlainDateTime): Temporal.PlainDateTime {
  const [hour, minute] = spec.start.split(':').map(Number) as [number, number];
  let slot: Temporal.PlainDateTime;
  if (spec.period === 'week') {
    const back = (wall.dayOfWeek - (WEEKDAYS.indexOf(spec.weekday) + 1) + 7) % 7;
    slot = wall.toPlainDate().subtract({ days: back }).toPlainDateTime({ hour, minute });
  } else if (spec.period === 'day') {
    slot = wall.toPlainDate().toPlainDateTime({ hour, minute });
  } else {
    slot = wall.toPlainDate().toPlainDateTime({ hour: wall.hour, minute });
  }
  return Temporal.PlainDateTime.compare(slot, wall) > 0 ? slot.subtract(STEPS[spec.period]) : slot;
}

/**
 * The instant of a local wall-clock time, by the rule of docs/design/admission.md
 * ("Windows"): a start in a DST gap resolves to the first valid instant after it, an
 * overlap to the first occurrence. Not Temporal's `compatible`, which moves a gap time
 * forward by the gap's length (02:30 → 03:30) rather than to the first valid instant
 * (03:00).
 */
export function resolveWall(wall: Temporal.PlainDateTime, tz: string): Temporal.Instant {
  let first: Temporal.ZonedDateTime;
  try {
    return wall.toZonedDateTime(tz, { disambiguation: 'reject' }).toInstant();
  } catch {
    try {
      first = wall.toZonedDateTime(tz, { disambiguation: 'earlier' });
    } catch (cause) {
      throw unavailable(tz, cause);
    }
  }
  if (Temporal.PlainDateTime.compare(first.toPlainDateTime(), wall) === 0) return first.toInstant();
  const transition = first.getTimeZoneTransition('next');
  if (transition === null) throw new AppError('internal', `no transition after a gap at ${wall.toString()} in ${tz}`);
  return transition.toInstant();
}

function guard(step: number, spec: WindowSpec): void {
  if (step > MAX_STEPS) {
    throw new AppError('internal', `window search did not converge for ${spec.period} ${spec.start} in ${spec.tz}`);
  }
}

function unavailable(tz: string, cause: unknown): AppError {
  return new AppError('admission_unavailable', `zone ${tz} is not in this server's zone database`, { tz }, { cause });
}
