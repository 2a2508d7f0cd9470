// Pins the todo drawer's timeline (docs/board.md, "The todo drawer") on the composition
// root (pump and ring writer): a todo pushed by its owner, rung to a listening session,
// claimed, asked about, answered on the board, rung again, claimed and completed shows
// those steps in order with who did each — the owner's email, the session (linked while
// it is live) — the question and answer escaped; the page without JavaScript shows the same.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pushTodo } from '../../src/endpoints/todos.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { testDatabase } from '../helpers/db.js';
import { agent, endpointOf, server, tool, until } from '../doorbell/world.js';
import { boardRequest, human, PASSWORD } from './harness.js';

const db = await testDatabase('board_timeline');
const s = await server(db.url, 'board-timeline');
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

async function rings(todoId: string): Promise<number> {
  const res = await db.pool.query(`SELECT 1 FROM doorbell_rings WHERE todo_id = $1 AND kind = 'todo'`, [todoId]);
  return res.rowCount ?? 0;
}

/** The timeline's entries as the drawer lists them: kind, who (data-who) and the text. */
function entries(text: string): Array<{ kind: string; who: string; text: string }> {
  const section = /<section data-slot="timeline">([^]*?)<\/section>/.exec(text)?.[1] ?? '';
  return [...section.matchAll(/<li data-kind="([^"]+)" data-who="([^"]*)">([^]*?)<\/li>/g)].map((m) => ({
    kind: m[1] ?? '',
    who: m[2] ?? '',
    text: m[3] ?? '',
  }));
}

test('the drawer tells created → rung → claimed → asked → answered → rung → claimed → done, with who did each', async () => {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  const ep = await endpointOf(db.pool, who.id, 'Timeline');
  const a = await agent(db.pool, s.url, ep.credential);

  const { todo } = await pushTodo(deps, who.id, ep.slug, { queue: 'inbox', title: 'deploy?' }, new Date());
  await until(async () => (await rings(todo.id)) === 1, 'the first ring to be recorded', 20_000);
  assert.equal((await tool(a, 'claim', { id: todo.id })).todo.state, 'claimed');
  const asked = await tool(a, 'ask_human', { id: todo.id, question: 'Ship <b>now</b>?', choices: ['ship', 'hold'] });
  assert.equal(asked.todo.state, 'waiting_on_human');
  const answered = await boardRequest(s.url, 'POST', `/needs-you/${todo.id}/answer`, cookie, {
    csrf: session.csrf,
    choice: '0',
  });
  assert.equal(answered.status, 303);
  // Back in line, it is rung afresh like new work.
  await until(async () => (await rings(todo.id)) === 2, 'the ring after the answer', 20_000);
  assert.equal((await tool(a, 'claim', { id: todo.id })).todo.state, 'claimed');
  assert.equal((await tool(a, 'complete', { id: todo.id, result: { shipped: true } })).todo.state, 'done');

  const res = await fetch(`${s.url}/todos/${todo.id}`, {
    headers: { cookie, 'hx-request': 'true', 'hx-target': 'drawer' },
  });
  assert.equal(res.status, 200);
  const drawer = await res.text();
  assert.match(drawer, /data-close-drawer/, 'the drawer fragment');
  const shown = entries(drawer);
  const sid = a.sessionId;
  assert.deepEqual(
    shown.map((e) => [e.kind, e.who]),
    [
      ['created', who.email],
      ['rung', sid],
      ['claimed', sid],
      ['asked', sid],
      ['answered', who.email],
      ['rung', sid],
      ['claimed', sid],
      ['done', sid],
    ],
  );
  for (const e of shown) assert.match(e.text, /^<time datetime="[^"]+">/, 'each entry starts with its time');
  // The session is live: its entries link to its page.
  assert.ok(shown[2]?.text.includes(`<a href="/sessions/${sid}" data-session-link>`));
  assert.ok(shown[3]?.text.includes('Ship &lt;b&gt;now&lt;/b&gt;?'), 'the question, escaped');
  assert.ok(!drawer.includes('<b>now</b>'));
  assert.match(shown[4]?.text ?? '', /data-detail>ship</);
  assert.match(shown[1]?.text ?? '', /heard \(claimed by /);
  assert.ok(!drawer.includes('data-cut'), 'nothing was cut');

  const page = await boardRequest(s.url, 'GET', `/todos/${todo.id}`, cookie);
  assert.equal(page.status, 200);
  assert.deepEqual(
    entries(page.text).map((e) => e.kind),
    shown.map((e) => e.kind),
  );
});
