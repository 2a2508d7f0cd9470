// Pins the operator API of schedules (docs/api.md, "Schedules"): create, list, show,
// patch (fields and pause / resume) and delete with next_run_at in every answer; errors
// that name the bad field (cron, tz, queue, unknown fields) and write nothing; the audit
// of who changed what, old → new; 404 for another human's endpoint or schedule.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend } from '../api/app.js';

const h = await apiHarness('schedule_api');
const { member, other } = await makePeople(h);
const mine = await vend(h, member, { queues: ['inbox', 'batch'] });
const theirs = await vend(h, other, { queues: ['inbox'] });
const base = `/api/v1/endpoints/${mine.endpoint.slug}/schedules`;
const weekdays = { queue: 'batch', cron: '0 9 * * 1-5', tz: 'Europe/Berlin', title: 'morning report' };

async function scheduleCount(): Promise<number> {
  const res = await h.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM schedules`);
  return res.rows[0]?.n ?? -1;
}

test('create, list, show, patch and delete a schedule, each answer carrying next_run_at', async () => {
  const created = await h.post(base, { token: member.token, body: { ...weekdays, payload: { a: 1 }, kind: 'report' } });
  expectStatus(created, 201, 'create');
  const s = created.body.schedule;
  assert.match(s.id, /^sc_/);
  assert.equal(s.paused, false);
  assert.ok(Date.parse(s.next_run_at) > Date.now(), 'the next run is ahead');
  const local = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Berlin',
    hour: '2-digit',
    minute: '2-digit',
    weekday: 'short',
  }).format(new Date(s.next_run_at));
  assert.match(local, /^(Mon|Tue|Wed|Thu|Fri) 09:00$/);

  const list = await h.get(base, { token: member.token });
  expectStatus(list, 200, 'list');
  assert.deepEqual(
    (list.body.schedules as Array<{ id: string }>).map((x) => x.id),
    [s.id],
  );

  const patched = await h.request('PATCH', `${base}/${s.id}`, {
    token: member.token,
    body: { cron: '30 7 * * *', title: 'early report', kind: null },
  });
  expectStatus(patched, 200, 'patch');
  assert.equal(patched.body.schedule.cron, '30 7 * * *');
  assert.equal(patched.body.schedule.kind, null);
  assert.notEqual(patched.body.schedule.next_run_at, s.next_run_at, 'a new expression is timed afresh');

  const paused = await h.request('PATCH', `${base}/${s.id}`, { token: member.token, body: { paused: true } });
  expectStatus(paused, 200, 'pause');
  assert.equal(paused.body.schedule.next_run_at, null);
  const resumed = await h.request('PATCH', `${base}/${s.id}`, { token: member.token, body: { paused: false } });
  assert.ok(Date.parse(resumed.body.schedule.next_run_at) > Date.now());

  const shown = await h.get(`${base}/${s.id}`, { token: member.token });
  expectStatus(shown, 200, 'show');
  assert.equal(shown.body.schedule.title, 'early report');
  const audit = await h.get(`${base}/${s.id}/audit`, { token: member.token });
  expectStatus(audit, 200, 'audit');
  assert.deepEqual(shown.body.audit, audit.body.audit);
  const rows = audit.body.audit as Array<{ action: string; actor_human_id: string; changes: Record<string, unknown> }>;
  assert.deepEqual(
    rows.map((r) => r.action),
    ['resume', 'pause', 'update', 'create'],
  );
  assert.ok(rows.every((r) => r.actor_human_id === member.human.id));
  assert.deepEqual(rows[2]?.changes, {
    cron: { old: '0 9 * * 1-5', new: '30 7 * * *' },
    title: { old: 'morning report', new: 'early report' },
    kind: { old: 'report', new: null },
  });
  assert.deepEqual(rows[3]?.changes.tz, { old: null, new: 'Europe/Berlin' });

  const deleted = await h.delete(`${base}/${s.id}`, { token: member.token });
  expectStatus(deleted, 200, 'delete');
  assert.deepEqual(deleted.body, { id: s.id, deleted: true });
  expectError(await h.get(`${base}/${s.id}`, { token: member.token }), 404, 'not_found');
  const kept = await h.pool.query(`SELECT action FROM schedule_audit WHERE schedule_id = $1 ORDER BY id`, [s.id]);
  assert.equal(kept.rows.at(-1)?.action, 'delete', 'the audit outlives the schedule');
});

test('a bad field is refused by name and nothing is written', async () => {
  const before = await scheduleCount();
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...weekdays, cron: '0 9 * *' }, 'cron'],
    [{ ...weekdays, cron: '61 9 * * *' }, 'cron'],
    [{ ...weekdays, cron: '0 0 31 2 *' }, 'cron'],
    [{ ...weekdays, tz: 'Mars/Olympus' }, 'tz'],
    [{ ...weekdays, tz: '+02:00' }, 'tz'],
    [{ ...weekdays, queue: 'elsewhere' }, 'queue'],
    [{ ...weekdays, queue: 'Not A Queue' }, 'queue'],
    [{ ...weekdays, title: '  ' }, 'title'],
    [{ ...weekdays, priority: 101 }, 'priority'],
    [{ ...weekdays, every: 'day' }, 'every'],
    [{ queue: 'inbox', tz: 'UTC', title: 't' }, 'cron'],
  ];
  for (const [body, field] of cases) {
    expectError(
      await h.post(base, { token: member.token, body }),
      400,
      'invalid_argument',
      field,
      JSON.stringify(body),
    );
  }
  assert.equal(await scheduleCount(), before);
  const { body } = await h.post(base, { token: member.token, body: weekdays });
  const id = body.schedule.id as string;
  for (const [patch, field] of [
    [{ tz: 'Nowhere/City' }, 'tz'],
    [{ queue: 'elsewhere' }, 'queue'],
    [{ cron: '* * * * * *' }, 'cron'],
    [{}, 'input'],
  ] as const) {
    expectError(
      await h.request('PATCH', `${base}/${id}`, { token: member.token, body: patch }),
      400,
      'invalid_argument',
      field,
      JSON.stringify(patch),
    );
  }
  const audit = await h.get(`${base}/${id}/audit`, { token: member.token });
  assert.equal(audit.body.audit.length, 1, 'refused patches are not audited');
});

test("another human's endpoint or schedule answers 404 on every route", async () => {
  const { body } = await h.post(base, { token: member.token, body: weekdays });
  const id = body.schedule.id as string;
  const foreign = `/api/v1/endpoints/${theirs.endpoint.slug}/schedules`;
  expectError(await h.get(base, { token: other.token }), 404, 'not_found');
  expectError(await h.post(base, { token: other.token, body: weekdays }), 404, 'not_found');
  expectError(await h.get(`${base}/${id}`, { token: other.token }), 404, 'not_found');
  expectError(
    await h.request('PATCH', `${base}/${id}`, { token: other.token, body: { paused: true } }),
    404,
    'not_found',
  );
  expectError(await h.delete(`${base}/${id}`, { token: other.token }), 404, 'not_found');
  // Their own endpoint does not reach my schedule either.
  expectError(await h.get(`${foreign}/${id}`, { token: other.token }), 404, 'not_found');
  expectError(await h.get(`${base}/${id}`), 401, 'unauthenticated');
  const still = await h.get(`${base}/${id}`, { token: member.token });
  assert.equal(still.body.schedule.paused, false);
});
