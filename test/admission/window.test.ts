// Pins the admission window arithmetic of docs/design/admission.md ("Windows"):
// validation, window starts and next boundaries on each zone's wall clock, DST gaps and
// overlaps, and the module's purity.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Temporal } from 'temporal-polyfill';
import { isAppError } from '../../src/domain/errors.js';
import {
  WEEKDAYS,
  formatWallClock,
  nextBoundary,
  parseWindow,
  resetsAt,
  windowBounds,
  windowStart,
  type Weekday,
  type WindowBounds,
  type WindowSpec,
} from '../../src/admission/window.js';

const at = (iso: string) => Temporal.Instant.from(iso);
const day = (tz: string, start: string): WindowSpec => ({ period: 'day', tz, start });
const hour = (tz: string, start: string): WindowSpec => ({ period: 'hour', tz, start });
const week = (tz: string, start: string, weekday: Weekday): WindowSpec => ({ period: 'week', tz, start, weekday });

/** Rows `what | period zone HH:MM [weekday] | instant | expected start | expected next`, all in UTC. */
function check(rows: string[]): void {
  for (const row of rows) {
    const [what = '', window = '', instant = '', start = '', next = ''] = row.split('|').map((c) => c.trim());
    const [period, tz = '', hhmm = '', weekday] = window.split(/\s+/);
    const spec =
      period === 'week' ? week(tz, hhmm, weekday as Weekday) : period === 'hour' ? hour(tz, hhmm) : day(tz, hhmm);
    const bounds = windowBounds(spec, at(instant));
    assert.ok(bounds.start.equals(at(start)), `${what}: start ${bounds.start.toString()}, expected ${start}`);
    assert.ok(bounds.next.equals(at(next)), `${what}: next ${bounds.next.toString()}, expected ${next}`);
    assert.ok(windowStart(spec, at(instant)).equals(at(start)), `${what}: windowStart`);
    assert.ok(nextBoundary(spec, at(instant)).equals(at(next)), `${what}: nextBoundary`);
  }
}

test('ordinary days start at the declared local time in each zone', () => {
  check([
    'UTC midnight                | day UTC 00:00                 | 2026-06-15T12:00Z | 2026-06-15T00:00Z | 2026-06-16T00:00Z',
    'New York 09:00, before it   | day America/New_York 09:00    | 2026-06-15T12:00Z | 2026-06-14T13:00Z | 2026-06-15T13:00Z',
    'New York 09:00 in winter    | day America/New_York 09:00    | 2026-01-15T15:00Z | 2026-01-15T14:00Z | 2026-01-16T14:00Z',
    'Los Angeles midnight        | day America/Los_Angeles 00:00 | 2026-06-15T12:00Z | 2026-06-15T07:00Z | 2026-06-16T07:00Z',
    'London midnight, summer     | day Europe/London 00:00       | 2026-07-01T10:00Z | 2026-06-30T23:00Z | 2026-07-01T23:00Z',
    'London midnight, winter     | day Europe/London 00:00       | 2026-01-15T10:00Z | 2026-01-15T00:00Z | 2026-01-16T00:00Z',
    'Lord Howe midnight (+10:30) | day Australia/Lord_Howe 00:00 | 2026-06-15T00:00Z | 2026-06-14T13:30Z | 2026-06-15T13:30Z',
    'Lord Howe midnight (+11)    | day Australia/Lord_Howe 00:00 | 2026-01-15T00:00Z | 2026-01-14T13:00Z | 2026-01-15T13:00Z',
    'Kolkata midnight (+05:30)   | day Asia/Kolkata 00:00        | 2026-06-15T00:00Z | 2026-06-14T18:30Z | 2026-06-15T18:30Z',
    'Kathmandu 06:00 (+05:45)    | day Asia/Kathmandu 06:00      | 2026-06-15T00:00Z | 2026-06-14T00:15Z | 2026-06-15T00:15Z',
    'Chatham midnight (+12:45)   | day Pacific/Chatham 00:00     | 2026-06-15T00:00Z | 2026-06-14T11:15Z | 2026-06-15T11:15Z',
    'Chatham midnight (+13:45)   | day Pacific/Chatham 00:00     | 2026-01-15T00:00Z | 2026-01-14T10:15Z | 2026-01-15T10:15Z',
  ]);
});

test('hour windows start every local hour at the minutes of start', () => {
  check([
    'UTC :00                     | hour UTC 00:00                | 2026-06-15T12:34Z | 2026-06-15T12:00Z | 2026-06-15T13:00Z',
    'the hour of start is moot   | hour UTC 17:15                | 2026-06-15T12:34Z | 2026-06-15T12:15Z | 2026-06-15T13:15Z',
    'Kolkata :00 is UTC :30      | hour Asia/Kolkata 00:00       | 2026-06-15T12:00Z | 2026-06-15T11:30Z | 2026-06-15T12:30Z',
    'Kathmandu :00 is UTC :15    | hour Asia/Kathmandu 00:00     | 2026-06-15T12:00Z | 2026-06-15T11:15Z | 2026-06-15T12:15Z',
    'Chatham :00 is UTC :15      | hour Pacific/Chatham 00:00    | 2026-06-15T12:00Z | 2026-06-15T11:15Z | 2026-06-15T12:15Z',
  ]);
});

test('a start in the spring-forward gap resolves to the first valid instant after it', () => {
  check([
    // US 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 resolves to 03:00 EDT (07:00Z), not 03:30.
    'New York 02:30 on the day   | day America/New_York 02:30    | 2026-03-08T12:00Z | 2026-03-08T07:00Z | 2026-03-09T06:30Z',
    'New York 02:30 just before  | day America/New_York 02:30    | 2026-03-08T06:59Z | 2026-03-07T07:30Z | 2026-03-08T07:00Z',
    'New York Sun 02:30 weekly   | week America/New_York 02:30 Sun | 2026-03-10T00:00Z | 2026-03-08T07:00Z | 2026-03-15T06:30Z',
    'New York :30 in the gap     | hour America/New_York 00:30   | 2026-03-08T07:10Z | 2026-03-08T07:00Z | 2026-03-08T07:30Z',
    'New York :30 before the gap | hour America/New_York 00:30   | 2026-03-08T06:45Z | 2026-03-08T06:30Z | 2026-03-08T07:00Z',
    'New York :00, 02 and 03 one | hour America/New_York 00:00   | 2026-03-08T06:30Z | 2026-03-08T06:00Z | 2026-03-08T07:00Z',
    'New York :00 after the gap  | hour America/New_York 00:00   | 2026-03-08T07:30Z | 2026-03-08T07:00Z | 2026-03-08T08:00Z',
    'Los Angeles 02:30           | day America/Los_Angeles 02:30 | 2026-03-08T12:00Z | 2026-03-08T10:00Z | 2026-03-09T09:30Z',
    // London 2026-03-29: 01:00 GMT becomes 02:00 BST.
    'London 01:30                | day Europe/London 01:30       | 2026-03-29T12:00Z | 2026-03-29T01:00Z | 2026-03-30T00:30Z',
    // Lord Howe 2026-10-04: 02:00 +10:30 becomes 02:30 +11 (a 30-minute gap).
    'Lord Howe 02:15             | day Australia/Lord_Howe 02:15 | 2026-10-04T00:00Z | 2026-10-03T15:30Z | 2026-10-04T15:15Z',
    'Lord Howe :15 in the gap    | hour Australia/Lord_Howe 00:15 | 2026-10-03T15:40Z | 2026-10-03T15:30Z | 2026-10-03T16:15Z',
    // Chatham 2026-09-27: 02:45 +12:45 becomes 03:45 +13:45.
    'Chatham 03:00               | day Pacific/Chatham 03:00     | 2026-09-27T00:00Z | 2026-09-26T14:00Z | 2026-09-27T13:15Z',
  ]);
});

test('a start in the fall-back overlap resolves to its first occurrence', () => {
  check([
    // US 2026-11-01: 02:00 EDT becomes 01:00 EST; 01:30 is the EDT one (05:30Z), never 06:30Z.
    'New York, second 01:45      | day America/New_York 01:30    | 2026-11-01T06:45Z | 2026-11-01T05:30Z | 2026-11-02T06:30Z',
    'New York, second 01:30      | day America/New_York 01:30    | 2026-11-01T06:30Z | 2026-11-01T05:30Z | 2026-11-02T06:30Z',
    'New York, before the first  | day America/New_York 01:30    | 2026-11-01T05:29Z | 2026-10-31T05:30Z | 2026-11-01T05:30Z',
    'New York 01:50 from 01:45   | day America/New_York 01:50    | 2026-11-01T06:45Z | 2026-11-01T05:50Z | 2026-11-02T06:50Z',
    'New York :30 spans the rerun| hour America/New_York 00:30   | 2026-11-01T06:45Z | 2026-11-01T05:30Z | 2026-11-01T07:30Z',
    'Los Angeles 01:30           | day America/Los_Angeles 01:30 | 2026-11-01T09:45Z | 2026-11-01T08:30Z | 2026-11-02T09:30Z',
    // London 2026-10-25: 02:00 BST becomes 01:00 GMT.
    'London 01:30                | day Europe/London 01:30       | 2026-10-25T01:45Z | 2026-10-25T00:30Z | 2026-10-26T01:30Z',
    // Lord Howe 2026-04-05: 02:00 +11 becomes 01:30 +10:30 (a 30-minute overlap).
    'Lord Howe 01:45             | day Australia/Lord_Howe 01:45 | 2026-04-04T15:20Z | 2026-04-04T14:45Z | 2026-04-05T15:15Z',
    // Chatham 2026-04-05: 03:45 +13:45 becomes 02:45 +12:45.
    'Chatham 03:00               | day Pacific/Chatham 03:00     | 2026-04-04T14:30Z | 2026-04-04T13:15Z | 2026-04-05T14:15Z',
    'Chatham Sun 03:00 weekly    | week Pacific/Chatham 03:00 Sun | 2026-04-05T00:00Z | 2026-04-04T13:15Z | 2026-04-11T14:15Z',
  ]);
});

test('the required zones, for hour, day and week windows, across their gaps and overlaps', () => {
  check([
    // America/Los_Angeles: 2026-03-08 02:00 PST → 03:00 PDT (10:00Z); 2026-11-01 02:00 PDT → 01:00 PST (09:00Z).
    'LA hour, gap                | hour America/Los_Angeles 00:30 | 2026-03-08T10:10Z | 2026-03-08T10:00Z | 2026-03-08T10:30Z',
    'LA hour, overlap            | hour America/Los_Angeles 00:30 | 2026-11-01T09:45Z | 2026-11-01T08:30Z | 2026-11-01T10:30Z',
    'LA day, gap, at its start   | day America/Los_Angeles 02:30  | 2026-03-08T10:00Z | 2026-03-08T10:00Z | 2026-03-09T09:30Z',
    'LA day, overlap             | day America/Los_Angeles 01:15  | 2026-11-01T09:20Z | 2026-11-01T08:15Z | 2026-11-02T09:15Z',
    'LA week, gap                | week America/Los_Angeles 02:30 Sun | 2026-03-10T00:00Z | 2026-03-08T10:00Z | 2026-03-15T09:30Z',
    'LA week, overlap            | week America/Los_Angeles 01:30 Sun | 2026-11-03T00:00Z | 2026-11-01T08:30Z | 2026-11-08T09:30Z',
    // Europe/London: 2026-03-29 01:00 GMT → 02:00 BST (01:00Z); 2026-10-25 02:00 BST → 01:00 GMT (01:00Z).
    'London hour, gap            | hour Europe/London 00:30       | 2026-03-29T01:10Z | 2026-03-29T01:00Z | 2026-03-29T01:30Z',
    'London hour, overlap        | hour Europe/London 00:00       | 2026-10-25T01:30Z | 2026-10-25T00:00Z | 2026-10-25T02:00Z',
    'London day, gap             | day Europe/London 01:00        | 2026-03-29T05:00Z | 2026-03-29T01:00Z | 2026-03-30T00:00Z',
    'London day, overlap         | day Europe/London 01:15        | 2026-10-25T01:20Z | 2026-10-25T00:15Z | 2026-10-26T01:15Z',
    'London week, gap            | week Europe/London 01:30 Sun   | 2026-03-31T12:00Z | 2026-03-29T01:00Z | 2026-04-05T00:30Z',
    'London week, overlap        | week Europe/London 01:30 Sun   | 2026-10-26T12:00Z | 2026-10-25T00:30Z | 2026-11-01T01:30Z',
    // Australia/Lord_Howe moves by 30 minutes: 2026-10-04 02:00 +10:30 → 02:30 +11; 2026-04-05 02:00 +11 → 01:30 +10:30.
    'Lord Howe hour, gap         | hour Australia/Lord_Howe 00:15 | 2026-10-03T15:40Z | 2026-10-03T15:30Z | 2026-10-03T16:15Z',
    'Lord Howe hour, overlap     | hour Australia/Lord_Howe 00:45 | 2026-04-04T15:20Z | 2026-04-04T14:45Z | 2026-04-04T16:15Z',
    'Lord Howe day, gap          | day Australia/Lord_Howe 02:15  | 2026-10-04T00:00Z | 2026-10-03T15:30Z | 2026-10-04T15:15Z',
    'Lord Howe day, overlap      | day Australia/Lord_Howe 01:45  | 2026-04-04T15:20Z | 2026-04-04T14:45Z | 2026-04-05T15:15Z',
    'Lord Howe week, gap         | week Australia/Lord_Howe 02:15 Sun | 2026-10-06T00:00Z | 2026-10-03T15:30Z | 2026-10-10T15:15Z',
    'Lord Howe week, overlap     | week Australia/Lord_Howe 01:45 Sun | 2026-04-06T00:00Z | 2026-04-04T14:45Z | 2026-04-11T15:15Z',
    // Asia/Kathmandu is +05:45 all year: its boundaries sit at :15 and :45 past UTC hours.
    'Kathmandu hour :30          | hour Asia/Kathmandu 00:30      | 2026-06-15T12:00Z | 2026-06-15T11:45Z | 2026-06-15T12:45Z',
    'Kathmandu day, US DST day   | day Asia/Kathmandu 00:00       | 2026-03-08T12:00Z | 2026-03-07T18:15Z | 2026-03-08T18:15Z',
    'Kathmandu week              | week Asia/Kathmandu 00:00 Mon  | 2026-06-17T12:00Z | 2026-06-14T18:15Z | 2026-06-21T18:15Z',
    // Asia/Tokyo has no DST: the same UTC boundaries on every transition date above.
    'Tokyo hour                  | hour Asia/Tokyo 00:15          | 2026-03-08T10:10Z | 2026-03-08T09:15Z | 2026-03-08T10:15Z',
    'Tokyo day                   | day Asia/Tokyo 09:00           | 2026-11-01T09:45Z | 2026-11-01T00:00Z | 2026-11-02T00:00Z',
    'Tokyo week                  | week Asia/Tokyo 02:30 Sun      | 2026-03-10T00:00Z | 2026-03-07T17:30Z | 2026-03-14T17:30Z',
  ]);
});

test('an instant exactly at a boundary belongs to the window that starts there', () => {
  const specs = [
    day('UTC', '00:00'),
    day('America/New_York', '02:30'),
    day('America/New_York', '01:30'),
    hour('Australia/Lord_Howe', '00:15'),
    week('Pacific/Chatham', '03:00', 'Sun'),
  ];
  for (const spec of specs) {
    for (let boundary = nextBoundary(spec, at('2026-01-01T00:00Z')), n = 0; n < 400; n++) {
      const label = `${JSON.stringify(spec)} at ${boundary.toString()}`;
      assert.ok(windowStart(spec, boundary).equals(boundary), label);
      assert.ok(nextBoundary(spec, boundary.subtract({ nanoseconds: 1 })).equals(boundary), label);
      boundary = nextBoundary(spec, boundary);
    }
  }
});

test('a week window starts on each declared weekday', () => {
  // 2026-06-17 is a Wednesday; the Wednesday window opens at 00:00 that day.
  const days = { Mon: 15, Tue: 16, Wed: 17, Thu: 11, Fri: 12, Sat: 13, Sun: 14 };
  for (const weekday of WEEKDAYS) {
    const date = `2026-06-${days[weekday]}`;
    const utc = windowBounds(week('UTC', '00:00', weekday), at('2026-06-17T12:00Z'));
    assert.ok(utc.start.equals(at(`${date}T00:00Z`)), `UTC ${weekday}`);
    assert.ok(utc.next.equals(at(`${date}T00:00Z`).add({ hours: 7 * 24 })), `UTC ${weekday} next`);
    const ny = windowBounds(week('America/New_York', '09:00', weekday), at('2026-06-17T14:00Z'));
    assert.ok(ny.start.equals(at(`${date}T13:00Z`)), `New York ${weekday}`);
  }
  check([
    'later the same weekday      | week UTC 13:00 Wed            | 2026-06-17T12:00Z | 2026-06-10T13:00Z | 2026-06-17T13:00Z',
    'Kolkata Mon 00:00           | week Asia/Kolkata 00:00 Mon   | 2026-06-17T12:00Z | 2026-06-14T18:30Z | 2026-06-21T18:30Z',
  ]);
});

const SWEEP_ZONES = [
  'UTC',
  'Asia/Tokyo',
  'America/New_York',
  'America/Los_Angeles',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Pacific/Chatham',
];

/** A window starts at the declared wall time (its first occurrence) or where a gap ends. */
function declaredOrGap(spec: WindowSpec, start: Temporal.Instant): boolean {
  const local = start.toZonedDateTimeISO(spec.tz);
  const [h, m] = spec.start.split(':').map(Number);
  const onTime = local.minute === m && (spec.period === 'hour' || local.hour === h);
  const onDay = spec.period !== 'week' || WEEKDAYS[local.dayOfWeek - 1] === spec.weekday;
  const first = local.toPlainDateTime().toZonedDateTime(spec.tz, { disambiguation: 'earlier' }).equals(local);
  const gapEnd = local.offset !== start.subtract({ nanoseconds: 1 }).toZonedDateTimeISO(spec.tz).offset;
  return (onTime && onDay && first) || gapEnd;
}

test('every instant of a DST year lies in exactly one window, and the windows tile it', () => {
  const end = at('2027-01-01T00:00Z');
  for (const tz of SWEEP_ZONES) {
    // Between them these starts fall in every 2026 gap and overlap of the zones above.
    const specs = [hour(tz, '00:45'), day(tz, '01:45'), week(tz, '02:15', 'Sun')];
    for (const spec of specs) {
      let previous: WindowBounds | undefined;
      for (let i = at('2026-01-01T00:00Z'); Temporal.Instant.compare(i, end) < 0; i = i.add({ minutes: 97 })) {
        const bounds = windowBounds(spec, i);
        // The label is only formatted when a check fails: formatting it for each of the
        // ~146,000 steps took a fifth of the test's time.
        const check = (ok: boolean, what: () => string) => {
          if (!ok) assert.fail(`${spec.period} ${spec.start} ${tz} at ${i.toString()}: ${what()}`);
        };
        check(Temporal.Instant.compare(bounds.start, i) <= 0, () => 'start <= i');
        check(Temporal.Instant.compare(i, bounds.next) < 0, () => 'i < next');
        if (previous && !previous.start.equals(bounds.start)) {
          // Walk any windows shorter than the step (a gap can leave one of 15 minutes).
          let boundary = previous.next;
          for (let n = 0; !boundary.equals(bounds.start); n++) {
            check(n < 3 && Temporal.Instant.compare(boundary, bounds.start) < 0, () => 'windows tile');
            check(declaredOrGap(spec, boundary), () => `${boundary.toString()} is declared or a gap's end`);
            boundary = nextBoundary(spec, boundary);
          }
          check(declaredOrGap(spec, bounds.start), () => "start is declared or a gap's end");
        }
        previous = bounds;
      }
    }
  }
});

test('parseWindow accepts the policy shape of docs/design/admission.md and names each bad field', () => {
  assert.deepEqual(parseWindow({ period: 'day', tz: 'Europe/London', start: '00:00', weekday: null }), {
    ok: true,
    spec: { period: 'day', tz: 'Europe/London', start: '00:00' },
  });
  assert.deepEqual(parseWindow({ period: 'week', tz: 'america/new_york', start: '23:59', weekday: 'Sun' }), {
    ok: true,
    spec: { period: 'week', tz: 'America/New_York', start: '23:59', weekday: 'Sun' },
  });
  const dayAt = (over: Record<string, unknown>) => ({ period: 'day', tz: 'UTC', start: '00:00', ...over });
  const weekAt = (over: Record<string, unknown>) => ({ period: 'week', tz: 'UTC', start: '00:00', ...over });
  // [input, the one problem as `field reason`]
  const bad: Array<[unknown, string]> = [
    ['day', 'window invalid'],
    [dayAt({ period: undefined }), 'period missing'],
    [dayAt({ period: 'month' }), 'period invalid'],
    [dayAt({ period: 'Day' }), 'period invalid'],
    [dayAt({ tz: undefined }), 'tz missing'],
    [dayAt({ tz: '+05:30' }), 'tz invalid'],
    [dayAt({ tz: 'Europe/London ' }), 'tz invalid'],
    [dayAt({ tz: 'Mars/Olympus' }), 'tz admission_unavailable'],
    [dayAt({ start: undefined }), 'start missing'],
    [weekAt({}), 'weekday missing'],
    [dayAt({ weekday: 'Mon' }), 'weekday invalid'],
    [{ period: 'hour', tz: 'UTC', start: '00:00', weekday: 'Mon' }, 'weekday invalid'],
    ...['24:00', '9:00', '09:60', '0900', '09:00:00', ' 09:00', '', 900].map((start): [unknown, string] => [
      dayAt({ start }),
      'start invalid',
    ]),
    ...['Monday', 'mon', 'MON', 1, 7, ''].map((weekday): [unknown, string] => [weekAt({ weekday }), 'weekday invalid']),
  ];
  for (const [input, problem] of bad) {
    const parsed = parseWindow(input);
    assert.deepEqual(parsed.ok ? [] : parsed.problems.map((p) => `${p.field} ${p.reason}`), [problem], problem);
  }
  const all = parseWindow({ period: 'year', tz: 7, start: '25:00', weekday: 'Funday' });
  assert.deepEqual(all.ok ? [] : all.problems.map((p) => p.field), ['period', 'tz', 'start', 'weekday']);
});

test('a zone missing from the zone database fails closed with admission_unavailable', () => {
  const spec = day('Mars/Olympus', '00:00');
  for (const fn of [windowStart, nextBoundary]) {
    assert.throws(
      () => fn(spec, at('2026-06-15T00:00:00Z')),
      (err) => isAppError(err, 'admission_unavailable'),
    );
  }
});

test('resets-at reads in the policy zone and in the viewer zone', () => {
  const reset = resetsAt(day('America/New_York', '02:30'), at('2026-03-07T12:00:00Z'), 'Asia/Kolkata');
  assert.equal(reset.at.toString(), '2026-03-08T07:00:00Z');
  assert.equal(reset.policy, '2026-03-08 03:00 -04:00 America/New_York');
  assert.equal(reset.viewer, '2026-03-08 12:30 +05:30 Asia/Kolkata');
  assert.equal(resetsAt(day('UTC', '00:00'), at('2026-03-07T12:00:00Z'), 'Nowhere/Land').viewer, null);
  assert.equal(
    formatWallClock(at('2026-06-15T00:00:00Z'), 'Pacific/Chatham'),
    '2026-06-15 12:45 +12:45 Pacific/Chatham',
  );
});

test('the window module is pure: no clock, no process, no I/O', () => {
  const source = readFileSync(new URL('../../src/admission/window.ts', import.meta.url), 'utf8');
  for (const banned of [/Date\.now/, /new Date\(/, /\bprocess\./, /Temporal\.Now/, /Math\.random/]) {
    assert.doesNotMatch(source, banned);
  }
  const imports = [...source.matchAll(/^import[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
  assert.deepEqual(imports, ['temporal-polyfill', '../domain/errors.js', '../domain/zones.js']);
});
