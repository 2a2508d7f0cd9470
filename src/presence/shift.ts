// Shift expressions (docs/design/hooks-and-presence.md): when an endpoint is on shift, on
// its zone's wall clock.
//
//   TZ=Europe/Berlin; Mon-Fri 09:00-17:00; Sat 10:00-12:00; Fri-Sun 22:00-02:00
//
// An optional `TZ=`/`CRON_TZ=` prefix names the IANA zone (default UTC); then windows
// separated by `;`, each an optional day list (`Mon`…`Sun`, ranges may wrap, comma lists;
// absent = every day) and `HH:MM-HH:MM`. Start inclusive, end exclusive; `24:00` only as an
// end; an end at or before the start runs past midnight into the next day; start == end is
// refused. Times are local wall clock, so DST stretches or shrinks a window: a local time
// in a gap resolves to the first valid instant after it, one in an overlap to the first
// occurrence (the admission windows' rule, docs/design/admission.md). Pure: the instant
// is always passed in; no clock reads, no I/O.

import { Temporal } from 'temporal-polyfill';
import { invalidArgument } from '../domain/errors.js';
import { unknownZone, zoneId } from '../domain/zones.js';

export const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

export interface ShiftWindow {
  /** days[0] is Monday (ISO day 1). */
  days: boolean[];
  /** Minutes after local midnight; end may be 1440 (24:00). */
  start: number;
  end: number;
  /** The window ends on the day after it starts. */
  crosses: boolean;
}

export interface Shift {
  tz: string;
  windows: ShiftWindow[];
}

/** Longest accepted expression: a few dozen windows, far below anything sensible. */
const MAX_CHARS = 500;
const TIME = /^(\d{2}):(\d{2})$/;
// A window search looks this many days around an instant: a week of windows plus the day
// before (a window crossing midnight) and the day after (the next start).
const SEARCH_DAYS = 9;

/** Parses a shift expression, or throws invalid_argument naming `shift`. */
export function parseShift(text: unknown): Shift {
  if (typeof text !== 'string' || text.trim() === '') throw bad('must be a non-empty shift expression');
  if (text.length > MAX_CHARS) throw bad(`must be at most ${MAX_CHARS} characters`);
  const parts = text.split(';').map((p) => p.trim());
  let tz = 'UTC';
  const head = /^(?:CRON_)?TZ=(\S+)$/.exec(parts[0] ?? '');
  if (head) {
    tz = parseZone(head[1] ?? '');
    parts.shift();
  }
  const windows = parts.filter((p, i) => p !== '' || i < parts.length - 1).map(parseWindow);
  if (windows.length === 0) throw bad('needs at least one window such as "Mon-Fri 09:00-17:00"');
  return { tz, windows };
}

function bad(message: string) {
  return invalidArgument('shift', message);
}

function parseZone(zone: string): string {
  if (zoneId(zone) === undefined) throw bad(unknownZone(zone));
  return zone;
}

function parseWindow(part: string): ShiftWindow {
  const tokens = part.split(/\s+/).filter((t) => t !== '');
  if (tokens.length === 0 || tokens.length > 2) throw bad(`"${part}" is not "[days] HH:MM-HH:MM"`);
  const days = tokens.length === 2 ? parseDays(tokens[0] ?? '') : DAYS.map(() => true);
  const range = tokens[tokens.length - 1] ?? '';
  const [from, to, ...rest] = range.split('-');
  if (from === undefined || to === undefined || rest.length > 0) throw bad(`"${range}" is not HH:MM-HH:MM`);
  const start = parseTime(from, false);
  const end = parseTime(to, true);
  if (start === end) throw bad(`"${range}" starts and ends at the same time`);
  return { days, start, end, crosses: end < start };
}

function parseTime(text: string, isEnd: boolean): number {
  const m = TIME.exec(text);
  const hours = Number(m?.[1]);
  const minutes = Number(m?.[2]);
  if (!m || minutes > 59 || hours > 24 || (hours === 24 && minutes !== 0)) throw bad(`"${text}" is not a time HH:MM`);
  if (hours === 24 && !isEnd) throw bad('24:00 is allowed only as an end');
  return hours * 60 + minutes;
}

function dayIndex(name: string): number {
  const i = DAYS.findIndex((d) => d.toLowerCase() === name.toLowerCase());
  if (i < 0) throw bad(`"${name}" is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)`);
  return i;
}

function parseDays(spec: string): boolean[] {
  const days = DAYS.map(() => false);
  for (const item of spec.split(',')) {
    const [a, b, ...rest] = item.split('-');
    if (a === undefined || rest.length > 0) throw bad(`"${item}" is not a day or a day range`);
    const from = dayIndex(a);
    const to = b === undefined ? from : dayIndex(b);
    for (let i = from; ; i = (i + 1) % 7) {
      days[i] = true;
      if (i === to) break;
    }
  }
  return days;
}

/** The instant of a local wall-clock time: gap → first valid instant after, overlap → first. */
function resolveWall(wall: Temporal.PlainDateTime, tz: string): Temporal.Instant {
  const first = wall.toZonedDateTime(tz, { disambiguation: 'earlier' });
  if (Temporal.PlainDateTime.compare(first.toPlainDateTime(), wall) === 0) return first.toInstant();
  return (first.getTimeZoneTransition('next') ?? first).toInstant();
}

function wallAt(date: Temporal.PlainDate, minutes: number, tz: string): Temporal.Instant {
  const day = minutes === 1440 ? date.add({ days: 1 }) : date;
  const m = minutes % 1440;
  return resolveWall(day.toPlainDateTime({ hour: Math.floor(m / 60), minute: m % 60 }), tz);
}

type Interval = { start: Temporal.Instant; end: Temporal.Instant };

/** The shift's intervals around an instant, sorted and merged where they touch. */
function intervalsAround(shift: Shift, instant: Temporal.Instant): Interval[] {
  const today = instant.toZonedDateTimeISO(shift.tz).toPlainDate();
  const raw: Interval[] = [];
  for (let offset = -1; offset < SEARCH_DAYS - 1; offset++) {
    const date = today.add({ days: offset });
    for (const w of shift.windows) {
      if (!w.days[date.dayOfWeek - 1]) continue;
      const start = wallAt(date, w.start, shift.tz);
      const end = wallAt(w.crosses ? date.add({ days: 1 }) : date, w.end, shift.tz);
      if (Temporal.Instant.compare(end, start) > 0) raw.push({ start, end });
    }
  }
  raw.sort((a, b) => Temporal.Instant.compare(a.start, b.start));
  const merged: Interval[] = [];
  for (const next of raw) {
    const last = merged[merged.length - 1];
    if (last && Temporal.Instant.compare(next.start, last.end) <= 0) {
      if (Temporal.Instant.compare(next.end, last.end) > 0) last.end = next.end;
    } else {
      merged.push({ ...next });
    }
  }
  return merged;
}

export interface ShiftStatus {
  onShift: boolean;
  /** When that changes: the end of the current window, or the next start (null: none within a week). */
  until: Temporal.Instant | null;
}

export function shiftStatus(shift: Shift, instant: Temporal.Instant): ShiftStatus {
  for (const interval of intervalsAround(shift, instant)) {
    if (Temporal.Instant.compare(interval.end, instant) <= 0) continue;
    if (Temporal.Instant.compare(interval.start, instant) <= 0) return { onShift: true, until: interval.end };
    return { onShift: false, until: interval.start };
  }
  return { onShift: false, until: null };
}

/** The first window start strictly after the instant (null: none within a week). */
export function nextShiftStart(shift: Shift, instant: Temporal.Instant): Temporal.Instant | null {
  const next = intervalsAround(shift, instant).find((i) => Temporal.Instant.compare(i.start, instant) > 0);
  return next?.start ?? null;
}
