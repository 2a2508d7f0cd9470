// Pins one check and one message for a zone everywhere one is taken: a schedule's tz, a
// budget window's tz and a presence shift's TZ= all refuse an unknown zone with the same
// words, echoing the value given.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWindow } from '../../src/admission/window.js';
import { AppError } from '../../src/domain/errors.js';
import { isZoneName, unknownZone, zoneId } from '../../src/domain/zones.js';
import { parseShift } from '../../src/presence/shift.js';
import { createScheduleInput } from '../../src/schedules/input.js';

const SAID = '"Mars/Olympus" is not an IANA zone this server knows, such as Europe/Berlin or UTC';

test('zoneId answers the zone database spelling, or undefined for a name it lacks or a non-name', () => {
  assert.equal(zoneId('europe/berlin'), 'Europe/Berlin');
  assert.equal(zoneId('UTC'), 'UTC');
  assert.equal(zoneId('Mars/Olympus'), undefined);
  assert.equal(zoneId('+05:30'), undefined);
  assert.equal(isZoneName('Mars/Olympus'), true);
  assert.equal(isZoneName('+05:30'), false);
  assert.equal(isZoneName('A'.repeat(65)), false);
  assert.equal(unknownZone('Mars/Olympus'), SAID);
  assert.equal(unknownZone(7), '7 is not an IANA zone this server knows, such as Europe/Berlin or UTC');
});

test('a schedule, a budget window and a shift say the same of an unknown zone', () => {
  const schedule = createScheduleInput.safeParse({ queue: 'inbox', cron: '0 9 * * *', tz: 'Mars/Olympus', title: 't' });
  assert.equal(schedule.success, false);
  assert.deepEqual(
    schedule.error?.issues.map((i) => [i.path.join('.'), i.message]),
    [['tz', SAID]],
  );

  const window = parseWindow({ period: 'day', tz: 'Mars/Olympus', start: '00:00' });
  assert.deepEqual(window.ok ? [] : window.problems.map((p) => [p.field, p.reason, p.message]), [
    ['tz', 'admission_unavailable', SAID],
  ]);
  const notAName = parseWindow({ period: 'day', tz: '+05:30', start: '00:00' });
  assert.deepEqual(notAName.ok ? [] : notAName.problems.map((p) => p.reason), ['invalid']);

  assert.throws(
    () => parseShift('TZ=Mars/Olympus; Mon-Fri 09:00-17:00'),
    (err: unknown) => err instanceof AppError && err.message === `shift: ${SAID}`,
  );
});
