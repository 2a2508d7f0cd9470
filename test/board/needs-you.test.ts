// Pins the board's "Needs you" view (docs/board.md, "Needs you"): it lists the signed-in
// human's waiting todos with the question escaped and an answer form per todo (radios for
// choices, a text box otherwise); an answer is a CSRF form answered 303 with a notice and
// the todo back in its queue; a second answer is a 409 page; another human's todo is 404;
// a form without its CSRF token is refused; the drawer shows the question, escaped.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { askHuman, claim, createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { boardRequest, human, PASSWORD, startBoard } from './harness.js';

const db = await testDatabase('board_needs_you');
const { url } = await startBoard(db);
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };
const todoDeps = { db: db.pool, defaultLeaseSeconds: 300 };

async function person(name: string) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const { endpoint } = await vendEndpoint(deps, who.id, { name, queues: ['inbox'] }, new Date());
  const agent = { endpointId: endpoint.id, sessionId: `s-${name}`, queues: endpoint.queues, defaultLeaseSeconds: null };
  return { who, cookie: `sb_session=${session.cookie}`, csrf: session.csrf, endpoint, agent };
}
type Person = Awaited<ReturnType<typeof person>>;

/** A todo of p's, claimed by its agent and parked on `question`. */
async function parked(p: Person, question: string, choices?: string[]): Promise<string> {
  const { todo } = await createTodo(
    todoDeps,
    { endpointId: p.endpoint.id },
    { humanId: p.who.id },
    {
      queue: 'inbox',
      title: `<i>ask</i> ${question.length}`,
    },
  );
  await claim(todoDeps, p.agent, { id: todo.id });
  await askHuman(todoDeps, p.agent, { id: todo.id, question, ...(choices ? { choices } : {}) });
  return todo.id;
}

test('the view lists the question escaped, with radios for choices and a text box otherwise; an answer returns the todo', async () => {
  const p = await person('needs');
  const picked = await parked(p, 'Ship <script>alert(1)</script>?', ['ship it', 'hold <b>']);
  const free = await parked(p, 'Which customer?');
  const page = await boardRequest(url, 'GET', '/needs-you', p.cookie);
  assert.equal(page.status, 200);
  assert.ok(page.text.includes('Ship &lt;script&gt;alert(1)&lt;/script&gt;?'));
  assert.ok(!page.text.includes('<script>alert(1)'));
  assert.ok(page.text.includes('hold &lt;b&gt;'));
  assert.match(page.text, new RegExp(`action="/needs-you/${picked}/answer"[^]*?type="radio" name="choice" value="1"`));
  assert.match(page.text, new RegExp(`action="/needs-you/${free}/answer"[^]*?<textarea[^>]*name="text"`));
  assert.match(page.text, /aria-current="page">Needs you/);

  const drawer = await boardRequest(url, 'GET', `/todos/${picked}`, p.cookie);
  assert.match(drawer.text, /data-waiting="waiting_on_human"/);
  assert.ok(!drawer.text.includes('<script>alert(1)'));

  const answered = await boardRequest(url, 'POST', `/needs-you/${picked}/answer`, p.cookie, {
    csrf: p.csrf,
    choice: '1',
  });
  assert.equal(answered.status, 303);
  assert.equal(answered.location, `/needs-you?answered=${picked}`);
  const row = await db.pool.query<{ state: string; answer_choice: number; answered_by: string }>(
    `SELECT t.state, q.answer_choice, q.answered_by FROM todos t JOIN todo_asks q ON q.todo_id = t.id WHERE t.id = $1`,
    [picked],
  );
  assert.deepEqual(row.rows[0], { state: 'pending', answer_choice: 1, answered_by: p.who.email });
  const after = await boardRequest(url, 'GET', `/needs-you?answered=${picked}`, p.cookie);
  assert.match(after.text, /data-done="answered"/);
  assert.ok(!after.text.includes(`/needs-you/${picked}/answer`), 'an answered todo leaves the list');

  const again = await boardRequest(url, 'POST', `/needs-you/${picked}/answer`, p.cookie, { csrf: p.csrf, choice: '0' });
  assert.equal(again.status, 409);
  assert.match(again.text, /no longer waiting on a human/);

  const empty = await boardRequest(url, 'POST', `/needs-you/${free}/answer`, p.cookie, { csrf: p.csrf, text: ' ' });
  assert.equal(empty.status, 400);
  assert.match(empty.text, /text: must not be empty/);
  const text = await boardRequest(url, 'POST', `/needs-you/${free}/answer`, p.cookie, {
    csrf: p.csrf,
    text: 'ACME, the big one',
  });
  assert.equal(text.status, 303);
});

test("another human's todo is 404, a form without its CSRF token is refused, and nothing is answered", async () => {
  const p = await person('owner');
  const stranger = await person('stranger');
  const id = await parked(p, 'mine?');
  const foreign = await boardRequest(url, 'POST', `/needs-you/${id}/answer`, stranger.cookie, {
    csrf: stranger.csrf,
    text: 'not yours',
  });
  assert.equal(foreign.status, 404);
  const listed = await boardRequest(url, 'GET', '/needs-you', stranger.cookie);
  assert.ok(!listed.text.includes(id));
  const forged = await boardRequest(url, 'POST', `/needs-you/${id}/answer`, p.cookie, { text: 'no token' });
  assert.equal(forged.status, 403);
  const state = await db.pool.query<{ state: string }>('SELECT state FROM todos WHERE id = $1', [id]);
  assert.equal(state.rows[0]?.state, 'waiting_on_human');
});
