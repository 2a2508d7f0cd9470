// Pins that every read surface carries a todo's derived `waiting` (docs/design/todos.md,
// "Why is it waiting"), for every reason: the API's JSON (show and list), MCP get_todo and
// list_todos through the SDK's client (whose answers are checked against the output
// schema), the CLI's human `todo show` and `todo list`, and the board's todo drawer.
// An agent reading over MCP is itself a live session, so it never sees no_consumer.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setPolicy } from '../../src/budgets/service.js';
import { newId } from '../../src/domain/ids.js';
import type { WaitingReason } from '../../src/domain/waiting.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { pushTodo } from '../../src/endpoints/todos.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { runCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, human, startBoard } from '../board/harness.js';
import { connect, ok, type Connected } from '../mcp/harness.js';

const db = await testDatabase('todo_waiting_surfaces');
const { pool } = db;
const { url } = await startBoard(db);
const deps = { db: pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };
const me = await human(db);
const cookie = `sb_session=${(await signIn(deps, me.email, PASSWORD)).cookie}`;
const { secret: token, hash } = newSecret('sbt');
await insertApiToken(pool, {
  id: newId('tk'),
  humanId: me.id,
  kind: 'human',
  name: 'waiting',
  tokenHash: hash,
  expiresAt: null,
});

async function endpoint(name: string, session = true) {
  const vended = await vendEndpoint(deps, me.id, { name }, new Date());
  const agent = session ? await connect(url, vended.credential) : null;
  const push = async (title: string) =>
    (await pushTodo(deps, me.id, vended.endpoint.slug, { queue: 'inbox', title }, new Date())).todo.id;
  return { ...vended, agent, push };
}

interface Case {
  reason: WaitingReason;
  id: string;
  slug: string;
  agent: Connected | null;
  /** What the CLI and the board say. */
  words: RegExp;
}

const main = await endpoint('main');
const scheduled = await main.push('scheduled');
await pool.query(`UPDATE todos SET not_before = now() + interval '1 hour', ready_at = NULL WHERE id = $1`, [scheduled]);
const backoff = await main.push('backoff');
await pool.query(
  `UPDATE todos SET state = 'failed', attempt = 1, next_retry_at = now() + interval '10 minutes',
     ready_at = now() + interval '10 minutes' WHERE id = $1`,
  [backoff],
);
const first = await main.push('first');
const second = await main.push('second');
await pool.query(`UPDATE todos SET ready_at = now() - interval '1 minute' WHERE id = $1`, [first]);

const away = await endpoint('away');
const out = await away.push('out');
await pool.query(
  `UPDATE endpoints SET presence_override = 'out', override_until = now() + interval '2 hours' WHERE id = $1`,
  [away.endpoint.id],
);

const budgeted = await endpoint('budgeted');
const paused = await budgeted.push('paused');
await setPolicy({ db: pool }, { humanId: me.id, endpointId: null }, budgeted.endpoint.id, 'inbox', {
  max_in_flight: 0,
});

const idle = await endpoint('idle', false);
const unconsumed = await idle.push('unconsumed');

const cases: Case[] = [
  { reason: 'scheduled', id: scheduled, slug: main.endpoint.slug, agent: main.agent, words: /scheduled until \d{4}-/ },
  {
    reason: 'retry_backoff',
    id: backoff,
    slug: main.endpoint.slug,
    agent: main.agent,
    words: /retry backoff until \d{4}-/,
  },
  {
    reason: 'presence_out',
    id: out,
    slug: away.endpoint.slug,
    agent: away.agent,
    words: /endpoint is out until \d{4}-/,
  },
  {
    reason: 'deferred',
    id: paused,
    slug: budgeted.endpoint.slug,
    agent: budgeted.agent,
    words: /deferred by the queue's budget \(paused\)/,
  },
  { reason: 'no_consumer', id: unconsumed, slug: idle.endpoint.slug, agent: null, words: /no consumer/ },
  { reason: 'queued', id: second, slug: main.endpoint.slug, agent: main.agent, words: /1 ahead in queue/ },
];

interface TodoJson {
  id: string;
  waiting?: { reason: string; [field: string]: unknown };
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(url + path, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, path);
  return (await res.json()) as T;
}
const show = (id: string) => api<{ todo: TodoJson }>(`/api/v1/todos/${id}`);

test('the API shows each reason on GET /todos/{id} and on the endpoint’s list', async () => {
  for (const c of cases) {
    const shown = await show(c.id);
    assert.equal(shown.todo.waiting?.reason, c.reason, c.reason);
    const listed = await api<{ todos: TodoJson[] }>(`/api/v1/endpoints/${c.slug}/todos`);
    const row = listed.todos.find((t) => t.id === c.id);
    assert.deepEqual(row?.waiting, shown.todo.waiting, c.reason);
  }
  assert.deepEqual((await show(first)).todo.waiting, { reason: 'queued', ahead: 0 });
  assert.deepEqual((await show(second)).todo.waiting, { reason: 'queued', ahead: 1 });
});

test('MCP get_todo and list_todos carry each reason an agent can see, valid against the output schema', async () => {
  for (const c of cases.filter((x) => x.agent)) {
    const agent = c.agent as Connected;
    const got = await ok(agent, 'get_todo', { id: c.id });
    assert.equal(got.todo.waiting?.reason, c.reason, c.reason);
    const listed = await ok(agent, 'list_todos', {});
    const row = (listed.todos as TodoJson[]).find((t) => t.id === c.id);
    assert.deepEqual(row?.waiting, got.todo.waiting, c.reason);
  }
  const deferred = (await ok(budgeted.agent as Connected, 'get_todo', { id: paused })).todo.waiting;
  assert.equal(deferred.budget, 'paused');
  assert.equal(deferred.usage.max_in_flight, 0);
});

test('over MCP the reading agent is a consumer: a todo that waited for none reads queued once it connects', async () => {
  const agent = await connect(url, idle.credential);
  const got = await ok(agent, 'get_todo', { id: unconsumed });
  assert.deepEqual(got.todo.waiting, { reason: 'queued', ahead: 0 });
  await agent.client.close();
  await pool.query(`UPDATE mcp_sessions SET closed_at = now() WHERE endpoint_id = $1`, [idle.endpoint.id]);
});

test('the CLI’s todo show prints a waiting line for each reason, and todo list a WAITING column', async () => {
  const env = { SWITCHBOARD_TOKEN: token, XDG_CONFIG_HOME: '/nonexistent' };
  for (const c of cases) {
    const run = await runCli(['todo', 'show', c.id, '--url', url], env);
    assert.equal(run.code, 0, run.stderr);
    const line = run.stdout.split('\n').find((l) => l.startsWith('waiting '));
    assert.match(line ?? '', c.words, `${c.reason}: ${run.stdout}`);
  }
  const list = await runCli(['todo', 'list', main.endpoint.slug, '--url', url], env);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout.split('\n')[0] ?? '', /\bWAITING\b/);
  assert.match(list.stdout.split('\n').find((l) => l.includes(first)) ?? '', /next in queue/);
  assert.match(list.stdout.split('\n').find((l) => l.includes(second)) ?? '', /1 ahead in queue/);
});

test('the board’s todo drawer shows why each todo waits, and nothing for one that does not', async () => {
  for (const c of cases) {
    const res = await fetch(`${url}/todos/${c.id}`, {
      headers: { cookie, 'hx-target': 'drawer', 'hx-request': 'true' },
    });
    assert.equal(res.status, 200);
    const html = await res.text();
    const dd = /<dd data-field="waiting" data-waiting="([a-z_]+)">(.*?)<\/dd>/.exec(html);
    assert.equal(dd?.[1], c.reason, `${c.reason}: ${html.slice(0, 1500)}`);
    assert.match((dd?.[2] ?? '').replace(/<[^>]+>/g, ''), c.words, c.reason);
  }
  await pool.query(`UPDATE todos SET state = 'canceled', ready_at = NULL WHERE id = $1`, [first]);
  const res = await fetch(`${url}/todos/${first}`, { headers: { cookie, 'hx-target': 'drawer' } });
  assert.doesNotMatch(await res.text(), /data-field="waiting"/);
});
