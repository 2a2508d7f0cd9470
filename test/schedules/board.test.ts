// Pins the board's schedules page over real HTTP, without JavaScript (plain form posts
// answered with 303): it renders an endpoint's schedules with their next run in the zone,
// the add form creates one audited with the signed-in human, a bad cron re-renders the
// page with the field named and the values kept, pause / resume / delete work, a missing
// CSRF token changes nothing, and another human's endpoint answers 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { createHuman } from '../../src/identity/humans.js';
import { testDatabase } from '../helpers/db.js';
import { startApp } from '../mcp/harness.js';
import { boardRequest } from '../board/harness.js';

const db = await testDatabase('schedule_board');
const { url } = await startApp(db.pool, 'schedule-board');
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };
const PASSWORD = 'correct horse battery';

async function person(name: string) {
  const email = `${name.toLowerCase()}-${Date.now()}@example.test`;
  const { human } = await createHuman(deps, { email, password: PASSWORD, role: 'member' });
  const session = await signIn(deps, email, PASSWORD);
  const { endpoint } = await vendEndpoint(deps, human.id, { name, queues: ['inbox', 'nightly'] }, new Date());
  return { humanId: human.id, cookie: `sb_session=${session.cookie}`, csrf: session.csrf, slug: endpoint.slug };
}

const request = (method: 'GET' | 'POST', path: string, cookie: string, form?: Record<string, string>) =>
  boardRequest(url, method, path, cookie, form);

const schedules = async () =>
  (await db.pool.query<{ id: string; paused: boolean }>(`SELECT id, paused FROM schedules ORDER BY id`)).rows;

test('the schedules page lists, adds, pauses, resumes and deletes without JavaScript', async () => {
  const me = await person('Nightly');
  const base = `/endpoints/${me.slug}/schedules`;
  const empty = await request('GET', base, me.cookie);
  assert.equal(empty.status, 200);
  assert.match(empty.text, /<h1>Schedules of Nightly<\/h1>/);
  assert.match(empty.text, /No schedules yet\./);
  assert.match(empty.text, /<option value="nightly">nightly<\/option>/);
  const card = await request('GET', '/endpoints', me.cookie);
  assert.match(card.text, new RegExp(`href="${base}">Schedules</a>`), 'the endpoint card links to its schedules');

  const form = { csrf: me.csrf, queue: 'nightly', cron: '30 2 * * *', tz: 'Europe/Berlin', title: 'backup' };
  const bad = await request('POST', base, me.cookie, { ...form, cron: '30 25 * * *' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /role="alert"[^>]*data-error-for="cron">cron: /);
  assert.match(bad.text, /value="30 25 \* \* \*"/, 'the values typed so far are kept');
  assert.equal((await schedules()).length, 0);

  const forged = await request('POST', base, me.cookie, { ...form, csrf: 'guess' });
  assert.equal(forged.status, 403);
  assert.equal((await schedules()).length, 0);

  const added = await request('POST', base, me.cookie, { ...form, payload: '{"disk":"a"}', priority: '0' });
  assert.equal(added.status, 303, added.text.slice(0, 300));
  assert.equal(added.location, base);
  const [row] = await schedules();
  assert.ok(row);
  const page = await request('GET', base, me.cookie);
  assert.match(page.text, new RegExp(`data-schedule="${row.id}"`));
  assert.match(page.text, /<code>30 2 \* \* \*<\/code> <span class="note">Europe\/Berlin<\/span>/);
  assert.match(page.text, /02:30 Europe\/Berlin/, 'the next run on the zone’s wall clock');
  assert.match(page.text, />Pause <span class="sr">backup<\/span>/);

  assert.equal((await request('POST', `${base}/${row.id}/pause`, me.cookie, { csrf: me.csrf })).status, 303);
  assert.deepEqual(await schedules(), [{ id: row.id, paused: true }]);
  assert.match((await request('GET', base, me.cookie)).text, />Resume <span class="sr">backup<\/span>/);
  assert.equal((await request('POST', `${base}/${row.id}/resume`, me.cookie, { csrf: me.csrf })).status, 303);
  assert.deepEqual(await schedules(), [{ id: row.id, paused: false }]);

  const audit = await db.pool.query(
    `SELECT action, actor_human_id FROM schedule_audit WHERE schedule_id = $1 ORDER BY id`,
    [row.id],
  );
  assert.deepEqual(
    audit.rows.map((r: { action: string }) => r.action),
    ['create', 'pause', 'resume'],
  );
  assert.ok(audit.rows.every((r: { actor_human_id: string }) => r.actor_human_id === me.humanId));

  assert.equal((await request('POST', `${base}/${row.id}/delete`, me.cookie, { csrf: me.csrf })).status, 303);
  assert.deepEqual(await schedules(), []);
});

test("another human's endpoint and schedules answer 404 on the page and every form", async () => {
  const me = await person('Mine');
  const them = await person('Theirs');
  const form = { csrf: them.csrf, queue: 'inbox', cron: '0 9 * * *', tz: 'UTC', title: 'theirs' };
  assert.equal((await request('POST', `/endpoints/${them.slug}/schedules`, them.cookie, form)).status, 303);
  const [theirs] = await schedules();
  assert.ok(theirs);
  const foreign = `/endpoints/${them.slug}/schedules`;
  assert.equal((await request('GET', foreign, me.cookie)).status, 404);
  assert.equal((await request('POST', foreign, me.cookie, { ...form, csrf: me.csrf })).status, 404);
  for (const action of ['pause', 'resume', 'delete']) {
    assert.equal(
      (await request('POST', `${foreign}/${theirs.id}/${action}`, me.cookie, { csrf: me.csrf })).status,
      404,
    );
    // Through my own endpoint, their schedule is just as unknown.
    const viaMine: string = `/endpoints/${me.slug}/schedules/${theirs.id}/${action}`;
    assert.equal((await request('POST', viaMine, me.cookie, { csrf: me.csrf })).status, 404);
  }
  assert.deepEqual(await schedules(), [{ id: theirs.id, paused: false }]);
});
