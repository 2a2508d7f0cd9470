// Pins the shift grammar and its evaluation on the zone's wall clock, across DST changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Temporal } from 'temporal-polyfill';
import { isAppError } from '../../src/domain/errors.js';
import { nextShiftStart, parseShift, shiftStatus } from '../../src/presence/shift.js';
import { clockInChange, clockOutChange, effectivePresence, type PresenceColumns } from '../../src/presence/evaluate.js';

const at = (iso: string) => Temporal.Instant.from(iso);

/** Rows `what | shift | instant | on/off | until (or -)`, instants in UTC. */
function check(rows: string[]): void {
  for (const row of rows) {
    const [what = '', expr = '', instant = '', on = '', until = ''] = row.split('|').map((c) => c.trim());
    const status = shiftStatus(parseShift(expr), at(instant));
    assert.equal(status.onShift, on === 'on', `${what}: on shift`);
    if (until === '-') assert.equal(status.until, null, `${what}: until`);
    else assert.ok(status.until?.equals(at(until)), `${what}: until ${status.until?.toString()}, expected ${until}`);
  }
}

test('weekday windows are evaluated on the local wall clock of the zone', () => {
  check([
    'Monday 09:00 London is on   | TZ=Europe/London; Mon-Fri 09:00-17:00 | 2026-11-30T09:00:00Z | on  | 2026-11-30T17:00:00Z',
    'the end is exclusive        | TZ=Europe/London; Mon-Fri 09:00-17:00 | 2026-11-30T17:00:00Z | off | 2026-12-01T09:00:00Z',
    'Saturday waits for Monday   | TZ=Europe/London; Mon-Fri 09:00-17:00 | 2026-12-05T12:00:00Z | off | 2026-12-07T09:00:00Z',
    'Saturday window of its own  | TZ=Europe/London; Mon-Fri 09:00-17:00; Sat 10:00-12:00 | 2026-12-05T10:30:00Z | on | 2026-12-05T12:00:00Z',
    'Berlin is an hour ahead     | TZ=Europe/Berlin; Mon-Fri 09:00-17:00 | 2026-11-30T08:00:00Z | on  | 2026-11-30T16:00:00Z',
    'no zone means UTC           | Mon-Fri 09:00-17:00                   | 2026-11-30T08:59:00Z | off | 2026-11-30T09:00:00Z',
    'no days means every day     | 09:00-10:00                           | 2026-12-06T09:30:00Z | on  | 2026-12-06T10:00:00Z',
    'a wrapping day range        | Fri-Mon 09:00-10:00                   | 2026-12-06T09:30:00Z | on  | 2026-12-06T10:00:00Z',
    'a comma day list            | Mon,Wed 09:00-10:00                   | 2026-12-01T09:30:00Z | off | 2026-12-02T09:00:00Z',
    'CRON_TZ is accepted         | CRON_TZ=Asia/Tokyo; 09:00-17:00       | 2026-11-30T00:00:00Z | on  | 2026-11-30T08:00:00Z',
  ]);
});

test('windows may cross midnight and 24:00 ends a day, adjacent windows join', () => {
  check([
    'night shift before midnight | Fri 22:00-06:00                    | 2026-12-04T23:00:00Z | on  | 2026-12-05T06:00:00Z',
    'night shift after midnight  | Fri 22:00-06:00                    | 2026-12-05T05:59:00Z | on  | 2026-12-05T06:00:00Z',
    'it belongs to its start day | Fri 22:00-06:00                    | 2026-12-04T05:00:00Z | off | 2026-12-04T22:00:00Z',
    '24:00 joins the next day    | Sun 22:00-24:00; Mon 00:00-02:00   | 2026-12-06T23:00:00Z | on  | 2026-12-07T02:00:00Z',
  ]);
});

test('a spring-forward gap shortens windows and moves a start inside the gap to the first valid instant', () => {
  check([
    'Berlin 01:00-03:00 lasts one hour  | TZ=Europe/Berlin; Sun 01:00-03:00 | 2026-03-29T00:30:00Z | on  | 2026-03-29T01:00:00Z',
    'and is over at 03:00 CEST          | TZ=Europe/Berlin; Sun 01:00-03:00 | 2026-03-29T01:00:00Z | off | 2026-04-04T23:00:00Z',
    'a start at 02:30 opens at 03:00    | TZ=Europe/Berlin; Sun 02:30-04:00 | 2026-03-29T00:59:00Z | off | 2026-03-29T01:00:00Z',
    'from the first valid instant       | TZ=Europe/Berlin; Sun 02:30-04:00 | 2026-03-29T01:00:00Z | on  | 2026-03-29T02:00:00Z',
    'New York night shift over the gap  | TZ=America/New_York; Sat 22:00-06:00 | 2026-03-08T09:30:00Z | on | 2026-03-08T10:00:00Z',
    'ends at 06:00 EDT                  | TZ=America/New_York; Sat 22:00-06:00 | 2026-03-08T10:00:00Z | off | 2026-03-15T02:00:00Z',
  ]);
});

test('a fall-back overlap stretches windows and a start inside it takes the first occurrence', () => {
  check([
    'Berlin 01:00-03:00 lasts three hours | TZ=Europe/Berlin; Sun 01:00-03:00 | 2026-10-24T23:00:00Z | on | 2026-10-25T02:00:00Z',
    'still on in the second 02:30         | TZ=Europe/Berlin; Sun 01:00-03:00 | 2026-10-25T01:30:00Z | on | 2026-10-25T02:00:00Z',
    'a start at 02:30 is the first 02:30  | TZ=Europe/Berlin; Sun 02:30-04:00 | 2026-10-25T00:30:00Z | on | 2026-10-25T03:00:00Z',
    'Sydney fall-back in April            | TZ=Australia/Sydney; Sun 01:00-04:00 | 2026-04-04T16:00:00Z | on | 2026-04-04T18:00:00Z',
  ]);
});

test('malformed shifts are refused with invalid_argument naming shift', () => {
  const bad = [
    '',
    '   ',
    'Mon-Fri',
    '09:00-09:00',
    '24:00-02:00',
    '9:00-17:00',
    '09:60-10:00',
    '25:00-26:00',
    '09:00-24:30',
    'Funday 09:00-10:00',
    'Mon-Fri 09:00 17:00',
    'TZ=Mars/Olympus_Mons; 09:00-17:00',
    'TZ=+05:00; 09:00-17:00',
    'TZ=UTC',
  ];
  for (const expr of bad) {
    assert.throws(
      () => parseShift(expr),
      (err: unknown) => isAppError(err, 'invalid_argument') && err.details?.field === 'shift',
      `"${expr}" should be refused`,
    );
  }
  assert.throws(
    () => parseShift(42),
    (err: unknown) => isAppError(err, 'invalid_argument'),
  );
});

test('the next shift start skips the window the instant is in', () => {
  const shift = parseShift('TZ=Europe/London; Mon-Fri 09:00-17:00');
  assert.ok(nextShiftStart(shift, at('2026-11-30T10:00:00Z'))?.equals(at('2026-12-01T09:00:00Z')));
  assert.ok(nextShiftStart(shift, at('2026-11-30T08:00:00Z'))?.equals(at('2026-11-30T09:00:00Z')));
});

const row = (over: Partial<PresenceColumns> = {}): PresenceColumns => ({
  shift: null,
  presence_override: null,
  override_until: null,
  override_by: null,
  ...over,
});
const d = (iso: string) => new Date(iso);

test('an unexpired override beats the shift, which beats the default in', () => {
  const shift = 'TZ=UTC; Mon-Fri 09:00-17:00';
  const now = d('2026-11-30T12:00:00Z');
  assert.deepEqual(effectivePresence(row(), now), { presence: 'in', source: 'default', until: null });
  assert.deepEqual(effectivePresence(row({ shift }), d('2026-11-30T20:00:00Z')), {
    presence: 'out',
    source: 'shift',
    until: d('2026-12-01T09:00:00Z'),
  });
  const out = row({ shift, presence_override: 'out', override_until: d('2026-11-30T13:00:00Z'), override_by: 'agent' });
  assert.deepEqual(effectivePresence(out, now), { presence: 'out', source: 'agent', until: d('2026-11-30T13:00:00Z') });
  assert.equal(
    effectivePresence(out, d('2026-11-30T13:00:00Z')).source,
    'shift',
    'an expired override no longer counts',
  );
  const op = row({ presence_override: 'out', override_by: 'operator:hu_1' });
  assert.deepEqual(effectivePresence(op, now), { presence: 'out', source: 'operator', until: null });
});

test('clock_in off shift is capped by the next shift start; on shift or without a shift it clears', () => {
  const shift = 'TZ=UTC; Mon-Fri 09:00-17:00';
  assert.deepEqual(clockInChange(shift, d('2026-11-30T07:00:00Z'), 8 * 3600), {
    set: { presence: 'in', until: d('2026-11-30T09:00:00Z') },
  });
  assert.deepEqual(clockInChange(shift, d('2026-11-30T18:00:00Z'), 3600), {
    set: { presence: 'in', until: d('2026-11-30T19:00:00Z') },
  });
  assert.deepEqual(clockInChange(shift, d('2026-11-30T10:00:00Z'), 3600), { clear: true });
  assert.deepEqual(clockInChange(null, d('2026-11-30T10:00:00Z'), 3600), { clear: true });
  assert.deepEqual(clockOutChange(shift, d('2026-11-30T10:00:00Z')), {
    set: { presence: 'out', until: d('2026-12-01T09:00:00Z') },
  });
  assert.deepEqual(clockOutChange(null, d('2026-11-30T10:00:00Z')), { set: { presence: 'out', until: null } });
});
