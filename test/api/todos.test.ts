// Pins the todo routes: push (idempotent), list with filters and cursor pages, show with attempts, retry and cancel by state.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { claim, complete, fail, type Agent } from '../../src/todos/index.js';
import { depsOf } from '../helpers/fixtures.js';
import {
  apiHarness,
  expectError,
  expectStatus,
  makePeople,
  push,
  tableCounts,
  vend,
  DEFAULT_LEASE_SECONDS,
  idsOf,
} from './app.js';

const h = await apiHarness('api_todos');
const { member } = await makePeople(h);
const deps = depsOf(h.pool, DEFAULT_LEASE_SECONDS);
beforeEach(() => h.fresh());

const { endpoint } = await vend(h, member, { name: 'worker', queues: ['inbox', 'builds'] });
const agent: Agent = {
  endpointId: endpoint.id,
  sessionId: 'session-1',
  queues: endpoint.queues,
  defaultLeaseSeconds: null,
};
const todosUrl = `/api/v1/endpoints/${endpoint.slug}/todos`;

/** A fresh endpoint for tests that count or page its todos. */
async function freshEndpoint(queues = ['inbox', 'builds']) {
  return (await vend(h, member, { queues })).endpoint;
}

test('push answers 201 with the todo and created: true', async () => {
  const res = await h.post(todosUrl, {
    token: member.token,
    body: {
      queue: 'builds',
      title: '  Build main  ',
      body: 'run the build',
      payload: { sha: 'abc123', n: [1, 2] },
      kind: 'build',
      max_attempts: 3,
    },
  });
  expectStatus(res, 201);
  assert.equal(res.body.created, true);
  const todo = res.body.todo;
  assert.match(todo.id, /^td_/);
  assert.equal(todo.endpoint_id, endpoint.id);
  assert.equal(todo.queue, 'builds');
  assert.equal(todo.title, 'Build main');
  assert.equal(todo.body, 'run the build');
  assert.deepEqual(todo.payload, { sha: 'abc123', n: [1, 2] });
  assert.equal(todo.kind, 'build');
  assert.equal(todo.state, 'pending');
  assert.equal(todo.attempt, 0);
  assert.equal(todo.max_attempts, 3);
  assert.equal(todo.lease_expires_at, null);
  assert.equal(todo.created_by_human_id, member.human.id);
  assert.ok(!Number.isNaN(Date.parse(todo.created_at)));
});

test('a duplicate idempotency key answers 200 with created: false and the same todo; only one is stored', async () => {
  const ep = await freshEndpoint();
  const body = { queue: 'inbox', title: 'once', idempotency_key: 'deploy-42' };
  const first = await h.post(`/api/v1/endpoints/${ep.slug}/todos`, { token: member.token, body });
  expectStatus(first, 201);
  const second = await h.post(`/api/v1/endpoints/${ep.id}/todos`, {
    token: member.token,
    body: { ...body, title: 'twice' },
  });
  expectStatus(second, 200);
  assert.equal(second.body.created, false);
  assert.equal(second.body.todo.id, first.body.todo.id);
  assert.equal(second.body.todo.title, 'once');
  const count = await h.pool.query('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [ep.id]);
  assert.equal(count.rows[0].n, 1);
});

test('push to a queue the endpoint does not have answers 400 naming queue and stores nothing', async () => {
  const before = await tableCounts(h.pool);
  const res = await h.post(todosUrl, { token: member.token, body: { queue: 'deploys', title: 'x' } });
  expectError(res, 400, 'invalid_argument', 'queue');
  assert.ok(String(res.body.error.message).includes('deploys'));
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('push refuses a missing title, a bad queue name and out-of-range max_attempts, naming the field', async () => {
  const before = await tableCounts(h.pool);
  const cases: [Record<string, unknown>, string][] = [
    [{ queue: 'inbox' }, 'title'],
    [{ queue: 'inbox', title: '   ' }, 'title'],
    [{ title: 'x' }, 'queue'],
    [{ queue: 'Not A Queue', title: 'x' }, 'queue'],
    [{ queue: 'inbox', title: 'x', max_attempts: 0 }, 'max_attempts'],
    [{ queue: 'inbox', title: 'x', max_attempts: 101 }, 'max_attempts'],
    [{ queue: 'inbox', title: 'x'.repeat(201) }, 'title'],
  ];
  for (const [body, field] of cases) {
    expectError(
      await h.post(todosUrl, { token: member.token, body }),
      400,
      'invalid_argument',
      field,
      JSON.stringify(body),
    );
  }
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('list pages newest first with next_cursor and filters by queue and state', async () => {
  const ep = await freshEndpoint();
  const url = `/api/v1/endpoints/${ep.slug}/todos`;
  const made: { id: string; queue: string }[] = [];
  for (let i = 0; i < 5; i++) {
    const queue = i % 2 === 0 ? 'inbox' : 'builds';
    made.push({ ...(await push(h, member, ep.slug, { queue, title: `todo ${i}` })), queue });
  }
  const newestFirst = made.map((t) => t.id).reverse();

  const all = await h.get(url, { token: member.token });
  expectStatus(all, 200);
  assert.deepEqual(Object.keys(all.body).sort(), ['next_cursor', 'todos']);
  assert.deepEqual(idsOf(all.body.todos), newestFirst);
  assert.equal(all.body.next_cursor, null);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await h.get(`${url}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: member.token });
    expectStatus(page, 200);
    assert.ok(page.body.todos.length <= 2);
    seen.push(...idsOf(page.body.todos));
    cursor = page.body.next_cursor;
    pages += 1;
  } while (cursor && pages < 10);
  assert.deepEqual(seen, newestFirst);
  assert.equal(pages, 3);

  const builds = await h.get(`${url}?queue=builds`, { token: member.token });
  assert.deepEqual(
    idsOf(builds.body.todos),
    made
      .filter((t) => t.queue === 'builds')
      .map((t) => t.id)
      .reverse(),
  );

  const canceled = made[0] as { id: string };
  expectStatus(await h.post(`/api/v1/todos/${canceled.id}/cancel`, { token: member.token }), 200);
  const byState = await h.get(`${url}?state=canceled`, { token: member.token });
  assert.deepEqual(idsOf(byState.body.todos), [canceled.id]);
  const pendingInbox = await h.get(`${url}?state=pending&queue=inbox&limit=1`, { token: member.token });
  assert.deepEqual(idsOf(pendingInbox.body.todos), [made[4]?.id]);
  assert.equal(pendingInbox.body.next_cursor, made[4]?.id);
});

test('list refuses a bad limit, state, queue or cursor and an unknown query field, naming it', async () => {
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=-1', 'limit'],
    ['state=sleeping', 'state'],
    ['queue=Bad%20Queue', 'queue'],
    ['cursor=not-a-cursor', 'cursor'],
    ['colour=blue', 'colour'],
    ['queue=inbox&sort=oldest', 'sort'],
  ];
  for (const [query, field] of cases) {
    expectError(await h.get(`${todosUrl}?${query}`, { token: member.token }), 400, 'invalid_argument', field, query);
  }
});

test('show answers the todo with its attempts, one per claim', async () => {
  const todo = await push(h, member, endpoint.slug, { title: 'attempted', max_attempts: 3 });
  const fresh = await h.get(`/api/v1/todos/${todo.id}`, { token: member.token });
  expectStatus(fresh, 200);
  assert.deepEqual(Object.keys(fresh.body).sort(), ['answers', 'attempts', 'links', 'todo']);
  assert.deepEqual(fresh.body.links, { children: [] });
  assert.equal(fresh.body.todo.id, todo.id);
  assert.deepEqual(fresh.body.attempts, []);

  await claim(deps, agent, { id: todo.id });
  await fail(deps, agent, { id: todo.id, error: 'flaky' });
  await h.pool.query(`UPDATE todos SET next_retry_at = now(), ready_at = now() WHERE id = $1`, [todo.id]);
  await claim(deps, { ...agent, sessionId: 'session-2' }, { id: todo.id });

  const res = await h.get(`/api/v1/todos/${todo.id}`, { token: member.token });
  expectStatus(res, 200);
  assert.equal(res.body.todo.state, 'claimed');
  assert.equal(res.body.todo.attempt, 2);
  assert.equal(res.body.attempts.length, 2);
  const [first, second] = res.body.attempts;
  assert.deepEqual(Object.keys(first).sort(), [
    'artifact',
    'attempt',
    'claimed_at',
    'ended_at',
    'lease_expires_at',
    'outcome',
    'seq',
    'session_id',
    'summary',
    'summary_truncated',
  ]);
  assert.equal(first.seq, 1);
  assert.equal(first.attempt, 1);
  assert.equal(first.session_id, 'session-1');
  assert.equal(first.outcome, 'failed');
  assert.ok(first.ended_at);
  assert.equal(second.seq, 2);
  assert.equal(second.session_id, 'session-2');
  assert.equal(second.outcome, null);
  assert.equal(second.ended_at, null);
});

test('cancel takes pending, claimed and failed todos to canceled and answers 409 for done or canceled', async () => {
  const pending = await push(h, member, endpoint.slug, { title: 'pending' });
  const claimed = await push(h, member, endpoint.slug, { title: 'claimed' });
  const failed = await push(h, member, endpoint.slug, { title: 'failed' });
  const done = await push(h, member, endpoint.slug, { title: 'done' });
  await claim(deps, agent, { id: claimed.id });
  await claim(deps, agent, { id: failed.id });
  await fail(deps, agent, { id: failed.id, error: 'nope' });
  await claim(deps, agent, { id: done.id });
  await complete(deps, agent, { id: done.id });

  for (const todo of [pending, claimed, failed]) {
    const res = await h.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
    expectStatus(res, 200, todo.title as string);
    assert.equal(res.body.todo.state, 'canceled');
  }
  const shown = await h.get(`/api/v1/todos/${claimed.id}`, { token: member.token });
  assert.equal(shown.body.attempts[0].outcome, 'canceled');

  for (const todo of [done, pending]) {
    const before = await h.pool.query('SELECT * FROM todos WHERE id = $1', [todo.id]);
    const res = await h.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
    expectError(res, 409, 'conflict', undefined, todo.title as string);
    assert.equal(res.body.error.details.id, todo.id);
    assert.deepEqual((await h.pool.query('SELECT * FROM todos WHERE id = $1', [todo.id])).rows, before.rows);
  }
});

test('retry takes failed and canceled todos back to pending at attempt 0 and answers 409 for pending, claimed or done', async () => {
  const failed = await push(h, member, endpoint.slug, { title: 'failed', max_attempts: 1 });
  const canceled = await push(h, member, endpoint.slug, { title: 'canceled' });
  const pending = await push(h, member, endpoint.slug, { title: 'pending' });
  const claimed = await push(h, member, endpoint.slug, { title: 'claimed' });
  const done = await push(h, member, endpoint.slug, { title: 'done' });
  await claim(deps, agent, { id: failed.id });
  await fail(deps, agent, { id: failed.id, error: 'dead letter' });
  expectStatus(await h.post(`/api/v1/todos/${canceled.id}/cancel`, { token: member.token }), 200);
  await claim(deps, agent, { id: claimed.id });
  await claim(deps, agent, { id: done.id });
  await complete(deps, agent, { id: done.id });

  for (const todo of [failed, canceled]) {
    const res = await h.post(`/api/v1/todos/${todo.id}/retry`, { token: member.token });
    expectStatus(res, 200, todo.title as string);
    assert.equal(res.body.todo.state, 'pending');
    assert.equal(res.body.todo.attempt, 0);
    assert.equal(res.body.todo.error, null);
  }
  const history = await h.get(`/api/v1/todos/${failed.id}`, { token: member.token });
  assert.equal(history.body.attempts.length, 1, 'the attempt history is kept');

  for (const todo of [pending, claimed, done]) {
    const before = await h.pool.query('SELECT * FROM todos WHERE id = $1', [todo.id]);
    const res = await h.post(`/api/v1/todos/${todo.id}/retry`, { token: member.token });
    expectError(res, 409, 'conflict', undefined, todo.title as string);
    assert.deepEqual((await h.pool.query('SELECT * FROM todos WHERE id = $1', [todo.id])).rows, before.rows);
  }
});

test('retry answers 409 when a live todo has since taken the same idempotency key', async () => {
  const ep = await freshEndpoint();
  const first = await push(h, member, ep.slug, { title: 'first', idempotency_key: 'k1' });
  expectStatus(await h.post(`/api/v1/todos/${first.id}/cancel`, { token: member.token }), 200);
  // Past the idempotency window the canceled todo no longer holds its key.
  await h.pool.query(`UPDATE todos SET updated_at = now() - interval '25 hours' WHERE id = $1`, [first.id]);
  const second = await push(h, member, ep.slug, { title: 'second', idempotency_key: 'k1' });
  assert.notEqual(second.id, first.id);
  const res = await h.post(`/api/v1/todos/${first.id}/retry`, { token: member.token });
  expectError(res, 409, 'conflict');
  const row = await h.pool.query('SELECT state FROM todos WHERE id = $1', [first.id]);
  assert.equal(row.rows[0].state, 'canceled');
});

test('an unknown todo id answers 404 on show, retry and cancel', async () => {
  for (const [method, suffix] of [
    ['GET', ''],
    ['POST', '/retry'],
    ['POST', '/cancel'],
  ] as const) {
    const res = await h.request(method, `/api/v1/todos/td_01ARZ3NDEKTSV4RRFFQ69G5FAV${suffix}`, {
      token: member.token,
    });
    expectError(res, 404, 'not_found', undefined, `${method} ${suffix}`);
  }
});
