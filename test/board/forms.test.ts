// Pins the guards of the board's later forms over real HTTP: the budget editor, self-test,
// presence, agent messages, message queue and capacity forms refuse a missing or wrong CSRF token with
// nothing changed; another human's endpoint and session answer 404 on each of their pages
// and forms; a member's capacity post is refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { testDatabase } from '../helpers/db.js';
import { connect, startApp } from '../mcp/harness.js';
import { PASSWORD, human, startBoard, boardRequest } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_forms');
const { url } = await startBoard(db);
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };
const ENTRY = '0190f3a2-0000-7000-8000-000000000001';

async function person(name: string) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const vended = await vendEndpoint(deps, who.id, { name }, new Date());
  const { sessionId } = await connect(url, vended.credential);
  return { cookie: `sb_session=${session.cookie}`, csrf: session.csrf, slug: vended.endpoint.slug, sessionId };
}

const request = (method: 'GET' | 'POST', path: string, cookie: string, form?: Record<string, string>) =>
  boardRequest(url, method, path, cookie, form);

const counts = async (): Promise<Record<string, number>> =>
  (
    await db.pool.query<Record<string, number>>(
      `SELECT (SELECT count(*) FROM admission_policies)::int AS policies, (SELECT count(*) FROM doorbell_tests)::int AS tests,
              (SELECT count(*) FROM queued_messages)::int AS messages, (SELECT count(*) FROM settings)::int AS settings,
              (SELECT count(*) FROM endpoints WHERE presence_override IS NOT NULL)::int AS overrides,
              (SELECT count(*) FROM endpoints WHERE accept_agent_messages)::int AS accepting`,
    )
  ).rows[0] ?? {};

function forms(p: { slug: string; sessionId: string }): Array<[string, Record<string, string>]> {
  return [
    [`/endpoints/${p.slug}/budgets/inbox`, { max_in_flight: '1' }],
    [`/endpoints/${p.slug}/budgets/inbox/clear`, {}],
    [`/endpoints/${p.slug}/self-test`, {}],
    [`/endpoints/${p.slug}/presence`, { presence: 'out' }],
    [`/endpoints/${p.slug}/agent-messages`, { accept: 'on' }],
    [`/sessions/${p.sessionId}/messages`, { content: 'forged' }],
    [`/sessions/${p.sessionId}/messages/clear`, {}],
    [`/sessions/${p.sessionId}/messages/${ENTRY}/remove`, {}],
    [`/sessions/${p.sessionId}/messages/${ENTRY}/edit`, { content: 'forged' }],
  ];
}

test('the budget, self-test, presence, message and capacity forms refuse a missing or wrong CSRF token', async () => {
  const me = await person('Guarded');
  const before = await counts();
  for (const [path, form] of [...forms(me), ['/settings/message-queue', { max_per_session: '3' }] as const]) {
    for (const csrf of [undefined, 'not-the-token', `${me.csrf}x`]) {
      const res = await request('POST', path, me.cookie, csrf === undefined ? form : { ...form, csrf });
      assert.equal(res.status, 403, `${path} with csrf ${String(csrf)}: ${res.status}`);
      assert.match(res.text, /form expired/);
    }
  }
  assert.deepEqual(await counts(), before);
});

test("another human's budget, self-test, presence and message queue answer 404, with nothing changed", async () => {
  const me = await person('Mine');
  const them = await person('Theirs');
  const before = await counts();
  for (const path of [
    `/endpoints/${them.slug}/budgets/inbox`,
    `/sessions/${them.sessionId}/messages`,
    `/endpoints/${them.slug}/self-test/dt_01J00000000000000000000000`,
  ]) {
    const res = await request('GET', path, me.cookie);
    assert.equal(res.status, 404, path);
    assert.doesNotMatch(res.text, /Theirs/);
  }
  assert.equal((await request('GET', `/endpoints/${them.slug}/budgets/inbox`, them.cookie)).status, 200);
  for (const [path, form] of forms(them)) {
    assert.equal((await request('POST', path, me.cookie, { ...form, csrf: me.csrf })).status, 404, path);
  }
  assert.deepEqual(await counts(), before);
  const member = await request('POST', '/settings/message-queue', me.cookie, { csrf: me.csrf, max_per_session: '3' });
  assert.equal(member.status, 403, 'a member cannot save the capacity');
  assert.deepEqual(await counts(), before);
});

test('the endpoint card shows whether it accepts agent messages, and its owner toggles it', async () => {
  const me = await person('Toggled');
  const card = async () => {
    const res = await request('GET', `/endpoints/${me.slug}`, me.cookie);
    assert.equal(res.status, 200);
    return /data-slot="agent-messages" data-accept="(true|false)"/.exec(res.text)?.[1];
  };
  assert.equal(await card(), 'false');
  const on = await request('POST', `/endpoints/${me.slug}/agent-messages`, me.cookie, { accept: 'on', csrf: me.csrf });
  assert.equal(on.status, 303);
  assert.equal(await card(), 'true');
  const stored = await db.pool.query('SELECT accept_agent_messages FROM endpoints WHERE slug = $1', [me.slug]);
  assert.deepEqual(stored.rows, [{ accept_agent_messages: true }]);
  await request('POST', `/endpoints/${me.slug}/agent-messages`, me.cookie, { accept: 'off', csrf: me.csrf });
  assert.equal(await card(), 'false');
});

test('when the environment locks the capacity, settings shows it disabled naming the variable, and a save is refused', async () => {
  const admin = await human(db, 'admin');
  const session = await signIn(deps, admin.email, PASSWORD);
  const locked = await startApp(db.pool, 'board-forms-locked', undefined, {
    env: { SWITCHBOARD_QUEUE_MAX_PER_SESSION: '4' },
  });
  const cookie = `sb_session=${session.cookie}`;
  const get = await fetch(`${locked.url}/settings`, { headers: { cookie } });
  const text = await get.text();
  assert.match(text, /data-setting="capacity-source">environment</);
  assert.match(text, /data-setting="capacity-effective">4</);
  assert.match(text, /id="mq-max"[^>]* disabled/);
  assert.match(text, /Locked: set by <code>SWITCHBOARD_QUEUE_MAX_PER_SESSION<\/code>/);
  assert.doesNotMatch(text, /Save capacity/);
  const save = await fetch(`${locked.url}/settings/message-queue`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: session.csrf, max_per_session: '9' }).toString(),
    redirect: 'manual',
  });
  assert.equal(save.status, 409);
  assert.match(await save.text(), /SWITCHBOARD_QUEUE_MAX_PER_SESSION/);
  assert.equal((await locked.services.messages.capacity.snapshot()).effective, 4);
});
