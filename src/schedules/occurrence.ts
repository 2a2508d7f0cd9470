// Occurrence arithmetic of schedules (docs/design/schedules.md, "Occurrences"): when a
// five-field cron expression read in an IANA zone fires next after an instant, and how a
// tick that finds several occurrences due fires one. Pure: the instant is always passed
// in; no clock, no I/O, no module state.
//
// croner parses and validates the expression and answers whether a local date matches its
// day fields (day of month, month, day of week, with its L / W / # extensions and the
// usual "either day field" rule when both are restricted). The walk over wall-clock
// minutes and the DST rule are ours, the same as admission windows' (src/admission/
// window.ts, resolveWall): a local time that does not exist (spring forward) fires at the
// first valid instant after it; a local time that exists twice (fall back) fires once, at
// the first. That holds for every expression, so `*/15 * * * *` is quiet during the
// repeated hour (croner's own runner would fire it twice).

import { Cron, CronPattern } from 'croner';
import { Temporal } from 'temporal-polyfill';
import { resolveWall } from '../admission/window.js';

/** What an occurrence depends on: the expression and its zone. */
export interface ScheduleTimes {
  cron: string;
  tz: string;
}

/** An expression parsed once, for the loops that ask for many occurrences. */
export interface CompiledSchedule {
  tz: string;
  minutes: number[];
  hours: number[];
  /** Whether a local date matches the day fields. */
  dayMatches: (date: Temporal.PlainDate) => boolean;
}

export type CronCheck = { ok: true } | { ok: false; message: string };

/**
 * Days searched for the next matching date. The rarest date an expression can ask for
 * recurs every 28 years (the fifth Monday of a February, `* * * 2 MON#5`); a search that
 * long costs ~10,600 day checks (tens of milliseconds) and only a rare expression, or
 * one that never fires (`0 0 31 2 *`), walks all of it.
 */
const SEARCH_DAYS = 366 * 29;

/**
 * At most this many missed occurrences are counted after downtime: a minutely schedule
 * down for a week would otherwise walk ten thousand minutes in the tick. Counting stops
 * here and the count reads "this many or more".
 */
export const MISSED_COUNT_CAP = 1000;

/**
 * Fields: the standard five (minute hour day-of-month month day-of-week) with numbers,
 * names, `*`, ranges, lists and steps, plus croner's L, W and #. `?` is refused: croner
 * reads it as "the current value", which would make a schedule depend on when it was saved.
 */
const CRON_TEXT = /^[0-9A-Za-z*,/#-]+( [0-9A-Za-z*,/#-]+){4}$/;

const normalize = (cron: string) => cron.trim().replace(/\s+/g, ' ');

/** Read in UTC on purpose: it is asked about local wall-clock dates written as UTC dates. */
function parse(cron: string): Cron {
  return new Cron(cron, { timezone: 'Etc/UTC', mode: '5-part', paused: true });
}

/** Whether `cron` is a five-field expression croner accepts (not whether it ever fires). */
export function checkCron(cron: string): CronCheck {
  const text = normalize(cron);
  if (!CRON_TEXT.test(text)) {
    return {
      ok: false,
      message: 'must be five fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5"',
    };
  }
  try {
    parse(text);
    return { ok: true };
  } catch (err) {
    return { ok: false, message: (err as Error).message.replace(/^CronPattern: /, '') };
  }
}

export function compile(s: ScheduleTimes): CompiledSchedule {
  const text = normalize(s.cron);
  const job = parse(text);
  const pattern = new CronPattern(text, undefined, { mode: '5-part' });
  const minutes = indexesSet(pattern.minute);
  const hours = indexesSet(pattern.hour);
  const [h0 = 0, m0 = 0] = [hours[0], minutes[0]];
  return {
    tz: s.tz,
    minutes,
    hours,
    // Time fields and day fields are independent, so a date matches when its first
    // matching time does.
    dayMatches: (d) => job.match(new Date(Date.UTC(d.year, d.month - 1, d.day, h0, m0))),
  };
}

function indexesSet(flags: number[]): number[] {
  return flags.flatMap((flag, i) => (flag ? [i] : []));
}

/**
 * The first occurrence strictly after `after`, or null when none comes within the search
 * (an expression that never fires). Walks local dates from the wall-clock date of
 * `after`; on each matching date, its times in order, each resolved by the DST rule.
 */
export function nextOccurrence(
  schedule: ScheduleTimes | CompiledSchedule,
  after: Temporal.Instant,
): Temporal.Instant | null {
  const c = 'dayMatches' in schedule ? schedule : compile(schedule);
  const start = after.toZonedDateTimeISO(c.tz).toPlainDateTime();
  const firstDate = start.toPlainDate();
  for (let d = 0; d <= SEARCH_DAYS; d++) {
    const date = d === 0 ? firstDate : firstDate.add({ days: d });
    if (!c.dayMatches(date)) continue;
    for (const hour of c.hours) {
      if (d === 0 && hour < start.hour) continue;
      for (const minute of c.minutes) {
        // Earlier wall times of the first date resolve to instants at or before `after`.
        if (d === 0 && hour === start.hour && minute < start.minute) continue;
        const at = resolveWall(date.toPlainDateTime({ hour, minute }), c.tz);
        if (Temporal.Instant.compare(at, after) > 0) return at;
      }
    }
  }
  return null;
}

/** What a tick does with a schedule due at `due`, seen at `now` (due <= now). */
export interface DueRun {
  /** The occurrence it fires: the latest one at or before `now`. */
  fire: Temporal.Instant;
  /** Occurrences after `due` and before `fire` that it stands in for (up to MISSED_COUNT_CAP). */
  missed: number;
  /** The next occurrence after `now`: the schedule's new next_run_at. */
  next: Temporal.Instant | null;
}

/**
 * One firing for everything due: the latest occurrence at or before `now`, how many
 * earlier ones it replaces, and the next one after `now`. Never a burst after downtime.
 */
export function dueRun(schedule: ScheduleTimes, due: Temporal.Instant, now: Temporal.Instant): DueRun {
  const c = compile(schedule);
  let fire = due;
  let missed = 0;
  for (;;) {
    const n = nextOccurrence(c, fire);
    if (n === null || Temporal.Instant.compare(n, now) > 0) return { fire, missed, next: n };
    missed += 1;
    fire = n;
    if (missed >= MISSED_COUNT_CAP) return { ...latestUpTo(c, fire, now), missed };
  }
}

/** Lookbacks tried for the latest occurrence once counting stopped: an hour, a day, a month. */
const LOOKBACKS_HOURS = [1, 24, 24 * 32];

/** The latest occurrence in (from, now], found from a recent point rather than step by step. */
function latestUpTo(
  c: CompiledSchedule,
  from: Temporal.Instant,
  now: Temporal.Instant,
): { fire: Temporal.Instant; next: Temporal.Instant | null } {
  for (const hours of LOOKBACKS_HOURS) {
    const back = now.subtract({ hours });
    if (Temporal.Instant.compare(back, from) <= 0) break;
    let fire: Temporal.Instant | null = null;
    let n = nextOccurrence(c, back);
    while (n !== null && Temporal.Instant.compare(n, now) <= 0) {
      fire = n;
      n = nextOccurrence(c, n);
    }
    if (fire !== null) return { fire, next: n };
  }
  let fire = from;
  let n = nextOccurrence(c, from);
  while (n !== null && Temporal.Instant.compare(n, now) <= 0) {
    fire = n;
    n = nextOccurrence(c, n);
  }
  return { fire, next: n };
}
