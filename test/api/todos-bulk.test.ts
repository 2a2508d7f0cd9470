// Pins the bulk create (POST /api/v1/endpoints/{ref}/todos with {todos: [...]}) and the
// idempotency window: all or nothing with every bad item listed, per-item dedup, one
// todo_ready per queue, and a key held by a finished todo until the window passes.

import assert from 'node:assert/strict';
import { beforeEach, test, type TestContext } from 'node:test';
import { CHANNEL } from '../../src/db/bus.js';
import { apiHarness, expectError, expectStatus, makePeople, push, tableCounts, vend } from './app.js';

// A per-credential burst of 40 (the default is far higher) so the one-token test stays short.
const h = await apiHarness('api_todos_bulk', undefined, { SWITCHBOARD_API_RATE: '20', SWITCHBOARD_API_BURST: '40' });
const { member } = await makePeople(h);
beforeEach(() => h.fresh());

async function freshEndpoint(queues = ['inbox', 'builds']) {
  return (await vend(h, member, { queues })).endpoint;
}

const bulk = (ref: string, todos: unknown[]) =>
  h.post(`/api/v1/endpoints/${ref}/todos`, { token: member.token, body: { todos } });

async function countTodos(endpointId: string): Promise<number> {
  const res = await h.pool.query('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [endpointId]);
  return Number(res.rows[0].n);
}

test('a bulk create answers 201 with the todos in request order and writes each with source api', async () => {
  const ep = await freshEndpoint();
  const res = await bulk(ep.slug, [
    { queue: 'inbox', title: 'one' },
    { queue: 'builds', title: 'two', payload: { n: 2 }, max_attempts: 2 },
    { queue: 'inbox', title: 'three', source: 'import' },
  ]);
  expectStatus(res, 201);
  assert.equal(res.body.created, 3);
  assert.equal(res.body.duplicates, 0);
  assert.deepEqual(
    (res.body.todos as { title: string }[]).map((t) => t.title),
    ['one', 'two', 'three'],
  );
  assert.deepEqual(res.body.todos[1].payload, { n: 2 });
  assert.equal(res.body.todos[1].max_attempts, 2);
  assert.deepEqual(
    (res.body.todos as { source: string }[]).map((t) => t.source),
    ['api', 'api', 'import'],
  );
  assert.equal(await countTodos(ep.id), 3);
});

test('one bad item among 1,000 of 4 KiB each answers 400 listing it, and no row is written', async () => {
  const ep = await freshEndpoint();
  const body = 'x'.repeat(4096);
  const items: unknown[] = Array.from({ length: 1000 }, (_, i) => ({ queue: 'inbox', title: `item ${i}`, body }));
  items[517] = { queue: 'inbox', title: '   ', body };
  const before = await tableCounts(h.pool);
  const res = await bulk(ep.slug, items);
  expectError(res, 400, 'invalid_argument', 'todos');
  assert.equal(res.body.error.details.items.length, 1);
  assert.equal(res.body.error.details.items[0].index, 517);
  assert.equal(res.body.error.details.items[0].field, 'title');
  assert.match(res.body.error.message, /todos\[517\]/);
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('every bad item is listed with its index, field and message', async () => {
  const ep = await freshEndpoint(['inbox']);
  const res = await bulk(ep.slug, [
    { queue: 'inbox', title: 'fine' },
    { queue: 'inbox', title: 'unknown field', colour: 'red' },
    { queue: 'elsewhere', title: 'not a queue of this endpoint' },
    { queue: 'inbox', title: 'zero attempts', max_attempts: 0 },
    'not an object',
  ]);
  expectError(res, 400, 'invalid_argument', 'todos');
  const items = res.body.error.details.items as { index: number; field: string; message: string }[];
  assert.deepEqual(
    items.map((i) => [i.index, i.field]),
    [
      [1, 'colour'],
      [2, 'queue'],
      [3, 'max_attempts'],
      [4, 'input'],
    ],
  );
  for (const item of items) assert.equal(typeof item.message, 'string');
  assert.match(items[1]?.message ?? '', /elsewhere/);
  assert.equal(await countTodos(ep.id), 0);
});

test('1,001 items, or none, answer 400 naming todos and write nothing', async () => {
  const ep = await freshEndpoint();
  const many = Array.from({ length: 1001 }, (_, i) => ({ queue: 'inbox', title: `t${i}` }));
  expectError(await bulk(ep.slug, many), 400, 'invalid_argument', 'todos');
  expectError(await bulk(ep.slug, []), 400, 'invalid_argument', 'todos');
  assert.equal(await countTodos(ep.id), 0);
});

test('a body over the bulk route’s 8 MiB limit answers 413 naming the limit', async () => {
  const ep = await freshEndpoint();
  const body = 'y'.repeat(9 * 1024);
  const items = Array.from({ length: 1000 }, (_, i) => ({ queue: 'inbox', title: `big ${i}`, body }));
  const res = await bulk(ep.slug, items);
  expectStatus(res, 413);
  assert.match(res.body.error.message, /8 MiB/);
});

test('a key repeated in the request answers the first item’s todo as a duplicate', async () => {
  const ep = await freshEndpoint();
  const res = await bulk(ep.slug, [
    { queue: 'inbox', title: 'first a', idempotency_key: 'a' },
    { queue: 'inbox', title: 'b', idempotency_key: 'b' },
    { queue: 'builds', title: 'second a', idempotency_key: 'a' },
    { queue: 'inbox', title: 'no key' },
  ]);
  expectStatus(res, 201);
  assert.equal(res.body.created, 3);
  assert.equal(res.body.duplicates, 1);
  const [a1, b, a2, free] = res.body.todos;
  assert.equal(a2.id, a1.id);
  assert.equal(a2.title, 'first a');
  assert.notEqual(b.id, a1.id);
  assert.notEqual(free.id, a1.id);
  assert.equal(await countTodos(ep.id), 3);
});

test('an item whose key an existing todo holds answers that todo and is not inserted', async () => {
  const ep = await freshEndpoint();
  const live = await push(h, member, ep.slug, { title: 'live', idempotency_key: 'live-key' });
  const finished = await push(h, member, ep.slug, { title: 'finished', idempotency_key: 'done-key' });
  await h.pool.query(
    `UPDATE todos SET state = 'done', ready_at = NULL, completed_at = now(), updated_at = now()
    WHERE endpoint_id = $1 AND id = $2`,
    [ep.id, finished.id],
  );
  const res = await bulk(ep.slug, [
    { queue: 'inbox', title: 'again live', idempotency_key: 'live-key' },
    { queue: 'inbox', title: 'new', idempotency_key: 'new-key' },
    { queue: 'inbox', title: 'again done', idempotency_key: 'done-key' },
  ]);
  expectStatus(res, 201);
  assert.deepEqual([res.body.created, res.body.duplicates], [1, 2]);
  assert.equal(res.body.todos[0].id, live.id);
  assert.equal(res.body.todos[2].id, finished.id);
  assert.equal(res.body.todos[2].state, 'done');
  assert.equal(await countTodos(ep.id), 3);
});

test('a bulk create sends one todo_ready per queue, not one per todo', async () => {
  const ep = await freshEndpoint();
  const client = await h.pool.connect();
  const heard: { type: string; endpoint_id?: string; queue?: string }[] = [];
  client.on('notification', (n) => heard.push(JSON.parse(n.payload ?? '{}') as (typeof heard)[number]));
  await client.query(`LISTEN ${CHANNEL}`);
  try {
    const items = Array.from({ length: 300 }, (_, i) => ({ queue: i % 3 === 0 ? 'builds' : 'inbox', title: `n${i}` }));
    expectStatus(await bulk(ep.slug, items), 201);
    // Notifications arrive in commit order: once this sentinel is heard, the bulk's are too.
    await h.pool.query(`SELECT pg_notify($1, '{"type":"sentinel"}')`, [CHANNEL]);
    while (!heard.some((e) => e.type === 'sentinel')) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await client.query(`UNLISTEN ${CHANNEL}`);
    client.release();
  }
  const ready = heard.filter((e) => e.type === 'todo_ready' && e.endpoint_id === ep.id).map((e) => e.queue);
  assert.deepEqual(ready.sort(), ['builds', 'inbox']);
});

test('a repeated single create within the window after done answers 200 with the same todo', async () => {
  const ep = await freshEndpoint();
  const first = await push(h, member, ep.slug, { title: 'report', idempotency_key: 'report-1' });
  await h.pool.query(
    `UPDATE todos SET state = 'done', ready_at = NULL, completed_at = now(), updated_at = now()
    WHERE endpoint_id = $1 AND id = $2`,
    [ep.id, first.id],
  );
  const again = await h.post(`/api/v1/endpoints/${ep.slug}/todos`, {
    token: member.token,
    body: { queue: 'inbox', title: 'report (retry)', idempotency_key: 'report-1' },
  });
  expectStatus(again, 200);
  assert.equal(again.body.created, false);
  assert.equal(again.body.todo.id, first.id);
  assert.equal(again.body.todo.state, 'done');
  assert.equal(await countTodos(ep.id), 1);
});

test('a canceled or dead-lettered todo holds its key within the window too', async () => {
  const ep = await freshEndpoint();
  for (const [key, set] of [
    ['canceled-key', `state = 'canceled'`],
    ['dead-key', `state = 'failed', next_retry_at = NULL, attempt = max_attempts`],
  ] as const) {
    const first = await push(h, member, ep.slug, { title: key, idempotency_key: key });
    await h.pool.query(
      `UPDATE todos SET ${set}, ready_at = NULL, updated_at = now() WHERE endpoint_id = $1 AND id = $2`,
      [ep.id, first.id],
    );
    const again = await h.post(`/api/v1/endpoints/${ep.slug}/todos`, {
      token: member.token,
      body: { queue: 'inbox', title: key, idempotency_key: key },
    });
    expectStatus(again, 200, key);
    assert.equal(again.body.todo.id, first.id, key);
  }
});

test('after the window a finished todo’s key is free: the same create makes a new todo', async () => {
  const ep = await freshEndpoint();
  const first = await push(h, member, ep.slug, { title: 'nightly', idempotency_key: 'nightly' });
  await h.pool.query(
    `UPDATE todos SET state = 'done', ready_at = NULL, completed_at = now() - interval '25 hours',
       updated_at = now() - interval '25 hours' WHERE endpoint_id = $1 AND id = $2`,
    [ep.id, first.id],
  );
  const again = await h.post(`/api/v1/endpoints/${ep.slug}/todos`, {
    token: member.token,
    body: { queue: 'inbox', title: 'nightly', idempotency_key: 'nightly' },
  });
  expectStatus(again, 201);
  assert.equal(again.body.created, true);
  assert.notEqual(again.body.todo.id, first.id);
  // The new live todo now holds the key, for the bulk path as well.
  const res = await bulk(ep.slug, [{ queue: 'inbox', title: 'nightly', idempotency_key: 'nightly' }]);
  assert.equal(res.body.todos[0].id, again.body.todo.id);
  assert.equal(await countTodos(ep.id), 2);
});

test('a bulk create on a revoked endpoint answers conflict and writes nothing', async () => {
  const ep = await freshEndpoint();
  expectStatus(await h.post(`/api/v1/endpoints/${ep.slug}/revoke`, { token: member.token }), 200);
  expectError(await bulk(ep.slug, [{ queue: 'inbox', title: 'late' }]), 409, 'conflict');
  assert.equal(await countTodos(ep.id), 0);
});

test('a bulk request counts once against the per-credential burst of 40, however many items it has', async (t: TestContext) => {
  const ep = await freshEndpoint();
  await h.fresh(); // full buckets again: vending the endpoint spent a token
  h.frozenAt = new Date();
  t.after(() => {
    h.frozenAt = null;
  });
  const items = (n: number) => Array.from({ length: 50 }, (_, i) => ({ queue: 'inbox', title: `r${n}.${i}` }));
  for (let n = 0; n < 40; n++) expectStatus(await bulk(ep.slug, items(n)), 201, `request ${n + 1}`);
  expectError(await bulk(ep.slug, items(40)), 429, 'resource_exhausted');
  assert.equal(await countTodos(ep.id), 40 * 50);
});
