// Pins the board's guards over real HTTP: every state-changing form refuses a missing or
// wrong CSRF token with nothing changed; another human's endpoints and todos answer 404
// on every page and form (sessions too); interpolated text is escaped on pages and in the live stream;
// the live stream needs a session and carries only the human's own endpoints.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { cancelTodo, pushTodo } from '../../src/endpoints/todos.js';
import { signIn, signOut } from '../../src/identity/board-sessions.js';
import { testDatabase } from '../helpers/db.js';
import { connect } from '../mcp/harness.js';
import { PASSWORD, human, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_pages');
const { url } = await startBoard(db);
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

async function person(name: string) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const vended = await vendEndpoint(deps, who.id, { name }, new Date());
  const { todo } = await pushTodo(
    deps,
    who.id,
    vended.endpoint.slug,
    { queue: 'inbox', title: `${name} work` },
    new Date(),
  );
  return {
    who,
    cookie: `sb_session=${session.cookie}`,
    csrf: session.csrf,
    slug: vended.endpoint.slug,
    credential: vended.credential,
    todo,
  };
}

async function get(path: string, cookie: string) {
  const res = await fetch(url + path, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

async function post(path: string, cookie: string, form: Record<string, string>) {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

const todoState = async (id: string) =>
  (await db.pool.query<{ state: string }>('SELECT state FROM todos WHERE id = $1', [id])).rows[0]?.state;
const endpointRevoked = async (slug: string) =>
  (
    await db.pool.query<{ revoked: boolean }>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM endpoints WHERE slug = $1',
      [slug],
    )
  ).rows[0]?.revoked;
const todoCount = async () => Number((await db.pool.query('SELECT count(*) FROM todos')).rows[0].count);
const endpointCount = async () => Number((await db.pool.query('SELECT count(*) FROM endpoints')).rows[0].count);

test('every state-changing form refuses a missing or wrong CSRF token and changes nothing', async () => {
  const me = await person('Guarded');
  const forms: Array<[string, Record<string, string>]> = [
    ['/todos', { target: `${me.slug}/inbox`, title: 'forged' }],
    [`/todos/${me.todo.id}/cancel`, {}],
    [`/todos/${me.todo.id}/retry`, {}],
    ['/endpoints/new', { step: 'name', name: 'forged' }],
    ['/endpoints', { step: 'confirm', name: 'forged', queues: 'inbox' }],
    [`/endpoints/${me.slug}/revoke`, {}],
    [`/endpoints/${me.slug}/delete`, {}],
  ];
  const before = { todos: await todoCount(), endpoints: await endpointCount() };
  for (const [path, form] of forms) {
    for (const csrf of [undefined, 'not-the-token', `${me.csrf}x`]) {
      const res = await post(path, me.cookie, csrf === undefined ? form : { ...form, csrf });
      assert.equal(res.status, 403, `${path} with csrf ${String(csrf)}: ${res.status}`);
      assert.match(res.text, /form expired/);
    }
  }
  assert.deepEqual({ todos: await todoCount(), endpoints: await endpointCount() }, before);
  assert.equal(await todoState(me.todo.id), 'pending');
  assert.equal(await endpointRevoked(me.slug), false);
  const out = await post('/logout', me.cookie, {});
  assert.equal(out.status, 403);
  assert.equal((await get('/', me.cookie)).status, 200);
});

test("another human's endpoint, todo and session answer 404 on every page and form, with nothing changed", async () => {
  const me = await person('Mine');
  const them = await person('Theirs');
  const { sessionId } = await connect(url, them.credential);
  for (const path of [`/endpoints/${them.slug}`, `/todos/${them.todo.id}`, `/sessions/${sessionId}`]) {
    const res = await get(path, me.cookie);
    assert.equal(res.status, 404, path);
    assert.doesNotMatch(res.text, /Theirs/);
    assert.equal((await get(path, them.cookie)).status, 200, `${path} for its owner`);
  }
  for (const path of [
    `/todos/${them.todo.id}/cancel`,
    `/endpoints/${them.slug}/revoke`,
    `/endpoints/${them.slug}/delete`,
  ]) {
    assert.equal((await post(path, me.cookie, { csrf: me.csrf })).status, 404, path);
  }
  const push = await post('/todos', me.cookie, { csrf: me.csrf, target: `${them.slug}/inbox`, title: 'sneaky' });
  assert.equal(push.status, 404);
  assert.equal(await todoState(them.todo.id), 'pending');
  assert.equal(await endpointRevoked(them.slug), false);
  const mine = await get('/', me.cookie);
  assert.doesNotMatch(mine.text, /Theirs/);
});

test('a todo titled <script> and an endpoint named with markup render as text, on pages and in the stream', async () => {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  const name = '<img src=x onerror=alert(1)>';
  const { endpoint } = await vendEndpoint(deps, who.id, { name }, new Date());
  const title = '<script>alert("t")</script>';
  const { todo } = await pushTodo(
    deps,
    who.id,
    endpoint.slug,
    { queue: 'inbox', title, body: '</pre><b>x</b>' },
    new Date(),
  );
  for (const path of ['/', '/endpoints', `/endpoints/${endpoint.slug}`, `/todos/${todo.id}`]) {
    const { text } = await get(path, cookie);
    assert.doesNotMatch(text, /<script>alert|<img src=x|<\/pre><b>/, path);
    assert.ok(text.includes('&lt;script&gt;') || text.includes('&lt;img src=x'), path);
  }
  const stream = await readStream(cookie, 'queues', (text) => text.includes('event: fragment'));
  assert.doesNotMatch(stream, /<script>alert/);
  assert.match(stream, /&lt;script&gt;alert/);
});

async function readStream(cookie: string, view: string, until: (text: string) => boolean, base = url): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${base}/board/events?view=${view}`, { headers: { cookie }, signal: controller.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 5000;
  while (!until(text) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  controller.abort();
  return text;
}

test("the live stream needs a board session and carries only the human's own endpoints", async () => {
  const anon = await fetch(`${url}/board/events?view=queues`);
  assert.equal(anon.status, 401);
  await anon.text();

  const me = await person('Watcher');
  const them = await person('Stranger');
  const seen = readStream(me.cookie, 'queues', (text) => text.includes('Fresh mine'));
  const theirs = readStream(them.cookie, 'queues', (text) => text.includes('Fresh theirs'));
  await new Promise((r) => setTimeout(r, 300));
  await pushTodo(deps, them.who.id, them.slug, { queue: 'inbox', title: 'Fresh theirs' }, new Date());
  await pushTodo(deps, me.who.id, me.slug, { queue: 'inbox', title: 'Fresh mine' }, new Date());
  const [mine, other] = await Promise.all([seen, theirs]);
  assert.match(mine, /Fresh mine/);
  assert.doesNotMatch(mine, /Stranger|Fresh theirs/);
  assert.match(other, /Fresh theirs/);
  assert.doesNotMatch(other, /Watcher|Fresh mine/);
});

test('with polling out of reach, a push and a cancel still reach the stream through NOTIFY', async () => {
  const slow = await startBoard(db, 600_000);
  const me = await person('Notified');
  const stream = readStream(
    me.cookie,
    'queues',
    (text) =>
      text.includes('Rung in') && /data-lane="failed"[^]*Rung in/.test(text.split('event: fragment').at(-1) ?? ''),
    slow.url,
  );
  await new Promise((r) => setTimeout(r, 300));
  const { todo } = await pushTodo(deps, me.who.id, me.slug, { queue: 'inbox', title: 'Rung in' }, new Date());
  await new Promise((r) => setTimeout(r, 300));
  await cancelTodo(deps, me.who.id, todo.id);
  const text = await stream;
  const fragments = text.split('event: fragment').slice(1);
  assert.ok(fragments.length >= 3, `initial, push and cancel fragments: ${fragments.length}`);
  assert.match(fragments.at(-1) ?? '', /data-lane="failed"[^]*Rung in/);
});

test('signing out ends an open live stream', async () => {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const res = await fetch(`${url}/board/events?view=endpoints`, {
    headers: { cookie: `sb_session=${session.cookie}` },
  });
  const reader = res.body!.getReader();
  await reader.read();
  await signOut(deps, session.cookie);
  const started = Date.now();
  let done = false;
  while (!done && Date.now() - started < 5000) done = (await reader.read()).done;
  assert.equal(done, true, 'the stream ended after sign-out');
});

test("board pages forbid framing and run only the board's own scripts and styles", async () => {
  const me = await person('Headers');
  for (const path of ['/', '/login', '/endpoints']) {
    const res = await fetch(url + path, { headers: { cookie: me.cookie } });
    await res.text();
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
  }
  const htmx = await fetch(`${url}/board/static/htmx.min.js`);
  assert.equal(htmx.status, 200);
  assert.match(htmx.headers.get('content-type') ?? '', /javascript/);
  assert.equal(htmx.headers.get('cache-control'), 'public, max-age=3600');
  assert.match(await htmx.text(), /htmx/);
  assert.equal((await fetch(`${url}/board/static/..%2Fguard.ts`)).status, 404);
});

test('an action returns only to a page of this board, never to another site', async () => {
  const me = await person('Redirects');
  const cancel = await post(`/todos/${me.todo.id}/cancel`, me.cookie, { csrf: me.csrf, back: '//evil.example/x' });
  assert.equal(cancel.status, 303);
  assert.equal(cancel.location, '/');
  const retry = await post(`/todos/${me.todo.id}/retry`, me.cookie, { csrf: me.csrf, back: `/todos/${me.todo.id}` });
  assert.equal(retry.location, `/todos/${me.todo.id}`);
  for (const back of ['https://evil.example', '/\\evil.example', 'javascript:alert(1)']) {
    const again = await post(`/todos/${me.todo.id}/cancel`, me.cookie, { csrf: me.csrf, back });
    assert.equal(again.status, 303, back);
    assert.equal(again.location, '/', back);
    await post(`/todos/${me.todo.id}/retry`, me.cookie, { csrf: me.csrf });
  }
});

test('the wizard keeps the step and names the field when an answer is wrong, and writes nothing', async () => {
  const me = await person('Wizard checks');
  const before = await endpointCount();
  const empty = await post('/endpoints/new', me.cookie, { csrf: me.csrf, step: 'name', name: '  ' });
  assert.equal(empty.status, 400);
  assert.match(empty.text, /name: must not be empty/);
  assert.match(empty.text, /Step 1 of 5/);
  const bad = await post('/endpoints/new', me.cookie, {
    csrf: me.csrf,
    step: 'queues',
    name: 'ok',
    queues: 'inbox, Bad Queue!',
  });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /queues: &quot;Bad&quot; must match/);
  assert.match(bad.text, /Step 2 of 5/);
  const skipped = await post('/endpoints', me.cookie, { csrf: me.csrf, name: 'ok', queues: '-nope' });
  assert.equal(skipped.status, 400);
  assert.equal(await endpointCount(), before);
});

test('signed-out pages send the browser to /login', async () => {
  for (const path of [
    '/',
    '/endpoints',
    '/endpoints/new',
    '/todos/td_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    '/endpoints/somebody/webhooks',
    '/endpoints/somebody/events',
    '/endpoints/somebody/events/ev_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    '/quarantine',
    '/quarantine/qi_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    '/endpoints/somebody/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV/rules',
  ]) {
    const res = await get(path, 'sb_session=sbx_nope');
    assert.equal(res.status, 303, path);
    assert.equal(res.location, '/login');
  }
});

test('the push form takes a priority and a not-before time, and shows them in the drawer; a bad time is named', async () => {
  const me = await person('scheduler');
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const pushed = await post('/todos', me.cookie, {
    csrf: me.csrf,
    target: `${me.slug}/inbox`,
    title: 'later and urgent',
    priority: '40',
    not_before: at,
  });
  assert.equal(pushed.status, 303, pushed.text);
  const row = (
    await db.pool.query<{ id: string; priority: number; not_before: Date; ready_at: Date | null }>(
      `SELECT id, priority, not_before, ready_at FROM todos WHERE title = 'later and urgent'`,
    )
  ).rows[0];
  assert.ok(row);
  assert.equal(row.priority, 40);
  assert.equal(row.not_before.toISOString(), at);
  assert.equal(row.ready_at, null, 'scheduled: not ready before its time');
  const drawer = await get(`/todos/${row.id}`, me.cookie);
  assert.match(drawer.text, /data-field="priority">40</);
  assert.match(drawer.text, /scheduled/i);

  const before = await todoCount();
  const bad = await post('/todos', me.cookie, {
    csrf: me.csrf,
    target: `${me.slug}/inbox`,
    title: 'bad time',
    not_before: 'tomorrow-ish',
  });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /not_before/);
  assert.match(bad.text, /value="tomorrow-ish"/, 'the form keeps what was typed');
  assert.equal(await todoCount(), before);
});
