// Pins the MCP verbs over the SDK's real client: the create → claim_next → heartbeat →
// complete round trip and its wire shapes, competing sessions, conflict for a
// non-owner, tenancy (another endpoint's todo is not_found), grants on queues, and
// malformed arguments to every verb answered as invalid_argument naming the field.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { connect, fails, ok, startApp, vend, type Body, type Connected } from './harness.js';

const { pool } = await testDatabase('mcp_verbs');
const { url } = await startApp(pool, 'instance-verbs');

const shared = await vend(pool, { queues: ['inbox', 'builds'] });
const first = await connect(url, shared.credential, 'first');
const second = await connect(url, shared.credential, 'second');

async function create(c: Connected, args: Record<string, unknown> = {}): Promise<Body> {
  return (await ok(c, 'create_todo', { queue: 'inbox', title: 'a todo', ...args })).todo;
}

test('create_todo → claim_next → heartbeat → complete: the wire shapes of docs/design/mcp-surface.md', async () => {
  const c = await connect(url, (await vend(pool)).credential);
  const created = await ok(c, 'create_todo', {
    queue: 'inbox',
    title: 'Summarise the report',
    body: 'the details',
    payload: { pages: [1, 2] },
    kind: 'summary',
    idempotency_key: 'report-1',
  });
  assert.equal(created.created, true);
  assert.equal(created.todo.state, 'pending');
  assert.equal('payload' in created.todo || 'body' in created.todo, false);
  const again = await ok(c, 'create_todo', {
    queue: 'inbox',
    title: 'Summarise the report',
    idempotency_key: 'report-1',
  });
  assert.deepEqual([again.created, again.todo.id], [false, created.todo.id]);

  const claimed = await ok(c, 'claim_next', {});
  assert.deepEqual(Object.keys(claimed), ['todo', 'lease_token', 'prior_attempts', 'answers']);
  assert.deepEqual(claimed.answers, []);
  assert.match(claimed.lease_token, /^lt_[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(claimed.prior_attempts, []);
  const todo = claimed.todo;
  assert.equal(todo.id, created.todo.id);
  assert.deepEqual(
    [todo.state, todo.attempt, todo.body, todo.payload],
    ['claimed', 1, 'the details', { pages: [1, 2] }],
  );
  for (const field of ['id', 'queue', 'title', 'state', 'attempt', 'max_attempts', 'lease_expires_at', 'created_at']) {
    assert.ok(field in todo, field);
  }
  assert.match(todo.lease_expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

  const beat = await ok(c, 'heartbeat', { id: todo.id, lease_seconds: 3600 });
  assert.ok(Date.parse(beat.todo.lease_expires_at) > Date.parse(todo.lease_expires_at));
  assert.equal('payload' in beat.todo, false);

  const read = await ok(c, 'get_todo', { id: todo.id });
  assert.equal(read.todo.state, 'claimed');
  assert.deepEqual(
    (read.attempts as Array<{ seq: number; outcome: string | null; ended_at: string | null }>).map((a) => [
      a.seq,
      a.outcome,
      a.ended_at,
    ]),
    [[1, null, null]],
  );
  assert.equal('payload' in read.todo || 'body' in read.todo, false);

  const done = await ok(c, 'complete', { id: todo.id, result: { summary: 'short' } });
  assert.equal(done.todo.state, 'done');
  assert.deepEqual(await ok(c, 'claim_next', {}), { empty: true });

  // Within the idempotency window the finished todo still holds its key.
  const repeat = await ok(c, 'create_todo', { queue: 'inbox', title: 'Summarise', idempotency_key: 'report-1' });
  assert.deepEqual([repeat.created, repeat.todo.id, repeat.todo.state], [false, created.todo.id, 'done']);
});

test('SWITCHBOARD_IDEMPOTENCY_WINDOW reaches create_todo: at 0s a finished todo holds no key', async () => {
  const { url: zeroUrl } = await startApp(pool, 'instance-window', undefined, {
    env: { SWITCHBOARD_IDEMPOTENCY_WINDOW: '0s' },
  });
  const c = await connect(zeroUrl, (await vend(pool)).credential);
  const first = await create(c, { idempotency_key: 'nightly' });
  await ok(c, 'claim', { id: first.id });
  await ok(c, 'complete', { id: first.id });
  const next = await ok(c, 'create_todo', { queue: 'inbox', title: 'again', idempotency_key: 'nightly' });
  assert.equal(next.created, true);
  assert.notEqual(next.todo.id, first.id);
});

test('fail and release end a claim; the todo comes back as the state machine says', async () => {
  const c = await connect(url, (await vend(pool)).credential);
  const todo = await create(c);
  await ok(c, 'claim', { id: todo.id });
  assert.equal((await ok(c, 'release', { id: todo.id })).todo.state, 'pending');
  const again = await ok(c, 'claim', { id: todo.id, lease_seconds: 60 });
  assert.equal(again.todo.payload, null);
  const failed = await ok(c, 'fail', { id: todo.id, error: 'flaky' });
  assert.deepEqual([failed.todo.state, failed.todo.error], ['failed', 'flaky']);
  assert.ok(failed.todo.next_retry_at);
});

test('list_todos is newest first, 50 by default, at most 200, without bodies', async () => {
  const c = await connect(url, (await vend(pool)).credential);
  const ids: string[] = [];
  for (let i = 0; i < 55; i++) ids.push((await create(c, { title: `todo ${i}`, body: 'x' })).id);
  const page = await ok(c, 'list_todos', {});
  assert.equal(page.todos.length, 50);
  assert.deepEqual(
    (page.todos as Array<{ id: string }>).map((t) => t.id),
    ids.slice(5).reverse(),
  );
  assert.equal('body' in page.todos[0], false);
  const rest = await ok(c, 'list_todos', { cursor: page.next_cursor });
  assert.deepEqual(
    (rest.todos as Array<{ id: string }>).map((t) => t.id),
    ids.slice(0, 5).reverse(),
  );
  assert.equal(rest.next_cursor, null);
  assert.equal((await ok(c, 'list_todos', { limit: 200 })).todos.length, 55);
  await fails(c, 'list_todos', { limit: 201 }, 'invalid_argument', 'limit');
});

test('two sessions of one endpoint compete: each todo is claimed exactly once', async () => {
  const ids = new Set<string>();
  for (let i = 0; i < 20; i++) ids.add((await create(first, { queue: 'builds', title: `race ${i}` })).id);
  const takes = await Promise.all(
    [first, second].map(async (c) => {
      const mine: string[] = [];
      for (;;) {
        const got = await ok(c, 'claim_next', { queue: 'builds' });
        if (got.empty) return mine;
        mine.push(got.todo.id);
        await ok(c, 'complete', { id: got.todo.id });
      }
    }),
  );
  const all = takes.flat();
  assert.equal(all.length, 20);
  assert.deepEqual(new Set(all), ids);
});

test('a session that does not hold the claim gets conflict on every owner verb', async () => {
  const todo = await create(first);
  await ok(first, 'claim', { id: todo.id });
  for (const [verb, args] of [
    ['heartbeat', { id: todo.id }],
    ['complete', { id: todo.id }],
    ['fail', { id: todo.id }],
    ['release', { id: todo.id }],
    ['claim', { id: todo.id }],
  ] as const) {
    const body = await fails(second, verb, args, 'conflict');
    assert.equal(body.error.id, todo.id);
  }
  // It never held the todo, so it is told that rather than "you lost it" (the message changed, the code did not).
  assert.match((await fails(second, 'heartbeat', { id: todo.id }, 'conflict')).error.message, /never held it/);
  await ok(first, 'complete', { id: todo.id });
});

test("endpoint B cannot read, claim or settle A's todo: not_found, exactly like an unknown id", async () => {
  const todo = await create(first);
  await ok(first, 'claim', { id: todo.id });
  const other = await connect(url, (await vend(pool)).credential);
  const unknown = 'td_01JAAAAAAAAAAAAAAAAAAAAAAA';
  for (const verb of ['get_todo', 'claim', 'heartbeat', 'complete', 'fail', 'release']) {
    const foreign = await fails(other, verb, { id: todo.id }, 'not_found');
    const missing = await fails(other, verb, { id: unknown }, 'not_found');
    assert.equal(
      JSON.stringify(foreign).split(todo.id).join('<id>'),
      JSON.stringify(missing).split(unknown).join('<id>'),
    );
  }
  assert.equal((await ok(other, 'list_todos', {})).todos.length, 0);
  assert.deepEqual(await ok(other, 'claim_next', {}), { empty: true });
  await ok(first, 'release', { id: todo.id });
});

test('queues outside the grant are forbidden', async () => {
  const c = await connect(url, (await vend(pool, { queues: ['inbox'] })).credential);
  await fails(c, 'claim_next', { queue: 'builds' }, 'forbidden', 'queue');
  await fails(c, 'create_todo', { queue: 'builds', title: 'elsewhere' }, 'forbidden', 'queue');
  assert.deepEqual((await ok(c, 'list_todos', { queue: 'builds' })).todos, []);
});

test('malformed arguments to every verb answer invalid_argument naming the field, and nothing is written', async () => {
  const c = await connect(url, (await vend(pool)).credential);
  const id = 'td_01JAAAAAAAAAAAAAAAAAAAAAAA';
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['list_todos', { limit: 0 }, 'limit'],
    ['list_todos', { limit: 'ten' }, 'limit'],
    ['list_todos', { state: 'sleeping' }, 'state'],
    ['list_todos', { queue: 'Bad Queue' }, 'queue'],
    ['list_todos', { cursor: 'nope' }, 'cursor'],
    ['list_todos', { include_synthetic: 'yes' }, 'include_synthetic'],
    ['list_todos', { colour: 'red' }, 'colour'],
    ['get_todo', {}, 'id'],
    ['get_todo', { id: 42 }, 'id'],
    ['claim', {}, 'id'],
    ['claim', { id, lease_seconds: 1 }, 'lease_seconds'],
    ['claim', { id, lease_seconds: 'long' }, 'lease_seconds'],
    ['claim_next', { queue: 7 }, 'queue'],
    ['claim_next', { lease_seconds: 86_401 }, 'lease_seconds'],
    ['claim_next', { lease: 60 }, 'lease'],
    ['heartbeat', {}, 'id'],
    ['heartbeat', { id, lease_seconds: 2.5 }, 'lease_seconds'],
    ['complete', { id: '' }, 'id'],
    ['complete', { id, extra: true }, 'extra'],
    ['fail', { id, error: 12 }, 'error'],
    ['fail', {}, 'id'],
    ['release', { id: null }, 'id'],
    ['create_todo', { title: 'no queue' }, 'queue'],
    ['create_todo', { queue: 'inbox' }, 'title'],
    ['create_todo', { queue: 'inbox', title: '   ' }, 'title'],
    ['create_todo', { queue: 'inbox', title: 'x'.repeat(201) }, 'title'],
    ['create_todo', { queue: 'inbox', title: 't', body: 5 }, 'body'],
    ['create_todo', { queue: 'inbox', title: 't', max_attempts: 0 }, 'max_attempts'],
    ['create_todo', { queue: 'inbox', title: 't', kind: '' }, 'kind'],
    ['create_todo', { queue: 'inbox', title: 't', idempotency_key: '' }, 'idempotency_key'],
    ['create_todo', { queue: 'inbox', title: 't', source: 'me' }, 'source'],
    ['create_todo', { queue: 'inbox', title: 't', payload: { a: 'x'.repeat(300 * 1024) } }, 'payload'],
    ['list_sessions', { all: true }, 'all'],
    ['whoami', { me: 1 }, 'me'],
  ];
  const before = await pool.query('SELECT count(*)::int AS n FROM todos');
  for (const [verb, args, field] of cases) await fails(c, verb, args, 'invalid_argument', field);
  const after = await pool.query('SELECT count(*)::int AS n FROM todos');
  assert.deepEqual(after.rows, before.rows);
  // The session still works after all of that.
  await ok(c, 'whoami');
});
