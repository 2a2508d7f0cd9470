// Pins the occurrence arithmetic of schedules (docs/design/schedules.md, "Occurrences"):
// the next run after an instant across DST changes, zones, month ends, weekdays and
// steps; one firing with a missed count after downtime; and which expressions are refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Temporal } from 'temporal-polyfill';
import { checkCron, dueRun, MISSED_COUNT_CAP, nextOccurrence } from '../../src/schedules/occurrence.js';

const at = (iso: string) => Temporal.Instant.from(iso);

interface Row {
  name: string;
  cron: string;
  tz: string;
  after: string;
  next: string;
}

const TABLE: Row[] = [
  // Europe/Berlin springs forward on 2026-03-29: 02:00 CET becomes 03:00 CEST.
  {
    name: 'a daily 02:30 in the spring-forward gap runs at 03:00, the first valid instant',
    cron: '30 2 * * *',
    tz: 'Europe/Berlin',
    after: '2026-03-28T12:00:00Z',
    next: '2026-03-29T01:00:00Z',
  },
  {
    name: 'the day after the gap, 02:30 is 02:30 CEST again',
    cron: '30 2 * * *',
    tz: 'Europe/Berlin',
    after: '2026-03-29T01:00:00Z',
    next: '2026-03-30T00:30:00Z',
  },
  {
    name: 'an every-30-minutes schedule fires once at 03:00 for the skipped hour, not three times',
    cron: '*/30 * * * *',
    tz: 'Europe/Berlin',
    after: '2026-03-29T00:30:00Z',
    next: '2026-03-29T01:00:00Z',
  },
  {
    name: 'after the 03:00 of a gap, an every-30-minutes schedule goes on at 03:30',
    cron: '*/30 * * * *',
    tz: 'Europe/Berlin',
    after: '2026-03-29T01:00:00Z',
    next: '2026-03-29T01:30:00Z',
  },
  // Europe/Berlin falls back on 2026-10-25: 03:00 CEST becomes 02:00 CET.
  {
    name: 'a daily 02:30 on the fall-back day runs at the first 02:30 (CEST)',
    cron: '30 2 * * *',
    tz: 'Europe/Berlin',
    after: '2026-10-24T12:00:00Z',
    next: '2026-10-25T00:30:00Z',
  },
  {
    name: 'the repeated 02:30 (CET) does not run again: next is the following day',
    cron: '30 2 * * *',
    tz: 'Europe/Berlin',
    after: '2026-10-25T00:30:00Z',
    next: '2026-10-26T01:30:00Z',
  },
  {
    name: 'an hourly :30 during the repeated hour runs once at 02:30, then at 03:30 CET',
    cron: '30 * * * *',
    tz: 'Europe/Berlin',
    after: '2026-10-25T00:30:00Z',
    next: '2026-10-25T02:30:00Z',
  },
  {
    name: 'asked from inside the repeated hour (02:10 CET), the :30 of that hour already ran',
    cron: '30 * * * *',
    tz: 'Europe/Berlin',
    after: '2026-10-25T01:10:00Z',
    next: '2026-10-25T02:30:00Z',
  },
  // America/New_York springs forward on 2026-03-08 at 02:00 EST.
  {
    name: 'New York: 02:15 on the spring-forward day runs at 03:00 EDT',
    cron: '15 2 * * *',
    tz: 'America/New_York',
    after: '2026-03-07T12:00:00Z',
    next: '2026-03-08T07:00:00Z',
  },
  {
    name: 'a zone east of UTC: 09:00 in Tokyo is 00:00 UTC',
    cron: '0 9 * * *',
    tz: 'Asia/Tokyo',
    after: '2026-06-01T01:00:00Z',
    next: '2026-06-02T00:00:00Z',
  },
  {
    name: 'a half-hour zone: 08:00 in Kolkata is 02:30 UTC',
    cron: '0 8 * * *',
    tz: 'Asia/Kolkata',
    after: '2026-06-01T00:00:00Z',
    next: '2026-06-01T02:30:00Z',
  },
  {
    name: 'weekdays: 09:00 Monday to Friday skips the weekend (Fri 2026-06-05 → Mon 06-08)',
    cron: '0 9 * * 1-5',
    tz: 'UTC',
    after: '2026-06-05T09:00:00Z',
    next: '2026-06-08T09:00:00Z',
  },
  {
    name: 'weekday names work like numbers',
    cron: '0 9 * * MON-FRI',
    tz: 'UTC',
    after: '2026-06-06T00:00:00Z',
    next: '2026-06-08T09:00:00Z',
  },
  {
    name: 'a weekday is the local weekday: Monday 01:00 in Auckland is Sunday in UTC',
    cron: '0 1 * * 1',
    tz: 'Pacific/Auckland',
    after: '2026-06-01T00:00:00Z',
    next: '2026-06-07T13:00:00Z',
  },
  {
    name: 'the 31st skips months without one (April → May)',
    cron: '0 0 31 * *',
    tz: 'UTC',
    after: '2026-03-31T00:00:00Z',
    next: '2026-05-31T00:00:00Z',
  },
  {
    name: 'L is the last day of the month, February included',
    cron: '0 12 L * *',
    tz: 'UTC',
    after: '2026-02-01T00:00:00Z',
    next: '2026-02-28T12:00:00Z',
  },
  {
    name: '29 February waits for the next leap year',
    cron: '0 0 29 2 *',
    tz: 'UTC',
    after: '2026-03-01T00:00:00Z',
    next: '2028-02-29T00:00:00Z',
  },
  {
    name: 'a month end crossing a year end in a zone: 1 January 00:00 in Berlin is 23:00 UTC',
    cron: '0 0 1 1 *',
    tz: 'Europe/Berlin',
    after: '2026-06-01T00:00:00Z',
    next: '2026-12-31T23:00:00Z',
  },
  {
    name: 'steps: every 15 minutes from 10:07 is 10:15',
    cron: '*/15 * * * *',
    tz: 'UTC',
    after: '2026-06-01T10:07:00Z',
    next: '2026-06-01T10:15:00Z',
  },
  {
    name: 'a stepped range: 5-20/5 past each hour from :20 is the next hour’s :05',
    cron: '5-20/5 * * * *',
    tz: 'UTC',
    after: '2026-06-01T10:20:00Z',
    next: '2026-06-01T11:05:00Z',
  },
  {
    name: 'lists: 9 and 17 o’clock, asked at 12:00, is 17:00',
    cron: '0 9,17 * * *',
    tz: 'UTC',
    after: '2026-06-01T12:00:00Z',
    next: '2026-06-01T17:00:00Z',
  },
  {
    name: 'both day fields restricted: either matches (the 1st or a Friday)',
    cron: '0 0 1 * 5',
    tz: 'UTC',
    after: '2026-06-01T00:00:00Z',
    next: '2026-06-05T00:00:00Z',
  },
  {
    name: 'an occurrence exactly at `after` is not next: strictly after',
    cron: '0 9 * * *',
    tz: 'UTC',
    after: '2026-06-01T09:00:00Z',
    next: '2026-06-02T09:00:00Z',
  },
  {
    name: 'a second after the minute still waits for the next one',
    cron: '* * * * *',
    tz: 'UTC',
    after: '2026-06-01T09:00:01Z',
    next: '2026-06-01T09:01:00Z',
  },
  {
    name: 'nth weekday: the second Monday of the month',
    cron: '0 9 * * MON#2',
    tz: 'UTC',
    after: '2026-06-01T00:00:00Z',
    next: '2026-06-08T09:00:00Z',
  },
];

for (const row of TABLE) {
  test(row.name, () => {
    const next = nextOccurrence({ cron: row.cron, tz: row.tz }, at(row.after));
    assert.equal(next?.toString(), at(row.next).toString(), `${row.cron} in ${row.tz} after ${row.after}`);
  });
}

test('every occurrence across the Berlin fall-back day is distinct and increasing', () => {
  const schedule = { cron: '*/20 * * * *', tz: 'Europe/Berlin' };
  const seen: string[] = [];
  let t = at('2026-10-24T22:00:00Z');
  while (Temporal.Instant.compare(t, at('2026-10-25T04:00:00Z')) < 0) {
    const n = nextOccurrence(schedule, t);
    assert.ok(n && Temporal.Instant.compare(n, t) > 0);
    seen.push(n.toString());
    t = n;
  }
  assert.equal(new Set(seen).size, seen.length);
  // 00:00 to 06:00 UTC is six hours of wall time less the repeated hour: 5 h × 3 + 1 (the edge).
  assert.ok(!seen.includes('2026-10-25T01:00:00Z'), 'the second 02:00 (CET) does not run');
  assert.ok(seen.includes('2026-10-25T00:00:00Z'), 'the first 02:00 (CEST) runs');
  assert.ok(seen.includes('2026-10-25T02:00:00Z'), '03:00 CET runs');
});

test('an expression that never fires has no next occurrence', () => {
  assert.equal(nextOccurrence({ cron: '0 0 31 2 *', tz: 'UTC' }, at('2026-01-01T00:00:00Z')), null);
});

test('after downtime one firing stands in for the missed occurrences: the latest due one', () => {
  const run = dueRun({ cron: '0 * * * *', tz: 'UTC' }, at('2026-06-01T10:00:00Z'), at('2026-06-01T15:30:00Z'));
  assert.equal(run.fire.toString(), '2026-06-01T15:00:00Z');
  assert.equal(run.missed, 5, '10:00 to 14:00 were missed');
  assert.equal(run.next?.toString(), '2026-06-01T16:00:00Z');
});

test('on time, a firing misses nothing and the next one is the following occurrence', () => {
  const run = dueRun({ cron: '*/5 * * * *', tz: 'UTC' }, at('2026-06-01T10:05:00Z'), at('2026-06-01T10:05:02Z'));
  assert.equal(run.fire.toString(), '2026-06-01T10:05:00Z');
  assert.equal(run.missed, 0);
  assert.equal(run.next?.toString(), '2026-06-01T10:10:00Z');
});

test('a minutely schedule down for a month stops counting at the cap and still fires the latest', () => {
  const started = performance.now();
  const run = dueRun(
    { cron: '* * * * *', tz: 'Europe/Berlin' },
    at('2026-05-01T00:00:00Z'),
    at('2026-06-01T12:34:56Z'),
  );
  assert.equal(run.missed, MISSED_COUNT_CAP);
  assert.equal(run.fire.toString(), '2026-06-01T12:34:00Z');
  assert.equal(run.next?.toString(), '2026-06-01T12:35:00Z');
  assert.ok(performance.now() - started < 10_000, 'the capped count stays cheap');
});

test('a schedule checks five fields and names the problem', () => {
  assert.deepEqual(checkCron('0 9 * * 1-5'), { ok: true });
  assert.deepEqual(checkCron(' 0  9 * *   MON-FRI '), { ok: true });
  for (const bad of ['0 9 * *', '0 0 9 * * *', '60 * * * *', '0 25 * * *', '*/0 * * * *', '0 9 ? * *', '@daily', '']) {
    const check = checkCron(bad);
    assert.equal(check.ok, false, bad);
    assert.ok(!check.ok && check.message.length > 0);
  }
});
