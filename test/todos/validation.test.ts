// Pins input validation: bad input answers invalid_argument naming its field, and writes nothing.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { AppError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import { claim, claimNext, complete, createTodo, fail, heartbeat, listTodos, release } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('validation');
const deps = depsOf(pool);
// The longest queue name the limits test uses is granted too: a todo lands only on a granted queue.
const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'ops', `a${'-'.repeat(61)}z`] });
const agent = agentOf(endpoint, 'owner');
const held = (
  await createTodo(deps, { endpointId: endpoint.id }, { humanId: endpoint.human_id }, { queue: 'inbox', title: 'held' })
).todo;
await claim(deps, agent, { id: held.id });
const waiting = (
  await createTodo(
    deps,
    { endpointId: endpoint.id },
    { humanId: endpoint.human_id },
    { queue: 'ops', title: 'waiting' },
  )
).todo;

const create = (input: unknown) => createTodo(deps, { endpointId: endpoint.id }, { humanId: endpoint.human_id }, input);

/** Every stored byte of the todo tables, with row counts, to show a refused call wrote nothing. */
async function storedState(): Promise<{ todos: number; attempts: number; digest: string }> {
  const res = await pool.query<{ todos: number; attempts: number; digest: string }>(
    `SELECT (SELECT count(*)::int FROM todos) AS todos,
            (SELECT count(*)::int FROM todo_attempts) AS attempts,
            md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY t.endpoint_id, t.id) FROM todos t), '')
             || coalesce((SELECT string_agg(a::text, '|' ORDER BY a.todo_id, a.seq) FROM todo_attempts a), '')) AS digest`,
  );
  const row = res.rows[0];
  assert.ok(row);
  return row;
}

/** Runs the call and checks it answers invalid_argument about `field` without writing anything. */
async function refuses(call: () => Promise<unknown>, field: string): Promise<void> {
  const before = await storedState();
  let error: unknown;
  try {
    await call();
  } catch (err) {
    error = err;
  }
  assert.ok(error !== undefined, `expected invalid_argument about ${field}, but the call succeeded`);
  assert.ok(error instanceof AppError, `expected an AppError about ${field}, got ${String(error)}`);
  assert.equal(error.code, 'invalid_argument', error.message);
  assert.ok(error.message.startsWith(`${field}: `), `message names the field first: "${error.message}"`);
  assert.equal(error.details?.field, field);
  assert.deepEqual(await storedState(), before, 'nothing was written');
}

interface Case {
  name: string;
  field: string;
  call: () => Promise<unknown>;
}

async function runCases(t: TestContext, cases: Case[]): Promise<void> {
  for (const c of cases) await t.test(c.name, () => refuses(c.call, c.field));
}

const ok = { queue: 'inbox', title: 'fine' };

test('createTodo refuses a bad queue name', async (t) => {
  await runCases(t, [
    { name: 'uppercase', field: 'queue', call: () => create({ ...ok, queue: 'Inbox' }) },
    { name: 'empty', field: 'queue', call: () => create({ ...ok, queue: '' }) },
    { name: '64 characters', field: 'queue', call: () => create({ ...ok, queue: 'q'.repeat(64) }) },
    { name: '200 characters', field: 'queue', call: () => create({ ...ok, queue: 'q'.repeat(200) }) },
    { name: 'leading dash', field: 'queue', call: () => create({ ...ok, queue: '-inbox' }) },
    { name: 'leading underscore', field: 'queue', call: () => create({ ...ok, queue: '_inbox' }) },
    { name: 'a space', field: 'queue', call: () => create({ ...ok, queue: 'in box' }) },
    { name: 'missing', field: 'queue', call: () => create({ title: 'no queue' }) },
    { name: 'not a string', field: 'queue', call: () => create({ ...ok, queue: 7 }) },
  ]);
});

test('createTodo refuses an empty or over-long title, an over-long body and an over-large payload', async (t) => {
  await runCases(t, [
    { name: 'empty title', field: 'title', call: () => create({ ...ok, title: '' }) },
    { name: 'blank title', field: 'title', call: () => create({ ...ok, title: '   ' }) },
    { name: 'missing title', field: 'title', call: () => create({ queue: 'inbox' }) },
    { name: '201-character title', field: 'title', call: () => create({ ...ok, title: 't'.repeat(201) }) },
    { name: 'body of 64 KiB + 1 byte', field: 'body', call: () => create({ ...ok, body: 'b'.repeat(64 * 1024 + 1) }) },
    // 32,769 two-byte characters: under 64 Ki characters, over 64 KiB.
    {
      name: 'body over 64 KiB in UTF-8 bytes',
      field: 'body',
      call: () => create({ ...ok, body: 'é'.repeat(32 * 1024 + 1) }),
    },
    {
      name: 'payload over 256 KiB as JSON',
      field: 'payload',
      call: () => create({ ...ok, payload: { blob: 'p'.repeat(256 * 1024) } }),
    },
  ]);
});

test('createTodo refuses unknown fields and a max_attempts outside 1..100 or not an integer', async (t) => {
  await runCases(t, [
    { name: 'colour', field: 'colour', call: () => create({ ...ok, colour: 'red' }) },
    { name: 'state', field: 'state', call: () => create({ ...ok, state: 'done' }) },
    { name: 'max_attempts 0', field: 'max_attempts', call: () => create({ ...ok, max_attempts: 0 }) },
    { name: 'max_attempts 101', field: 'max_attempts', call: () => create({ ...ok, max_attempts: 101 }) },
    { name: 'max_attempts 2.5', field: 'max_attempts', call: () => create({ ...ok, max_attempts: 2.5 }) },
    { name: 'max_attempts "5"', field: 'max_attempts', call: () => create({ ...ok, max_attempts: '5' }) },
    { name: 'empty kind', field: 'kind', call: () => create({ ...ok, kind: '' }) },
    { name: 'empty idempotency_key', field: 'idempotency_key', call: () => create({ ...ok, idempotency_key: '' }) },
    { name: 'not an object', field: 'input', call: () => create('inbox') },
  ]);
});

test('createTodo accepts every value exactly at its limit', async () => {
  const { todo, created } = await create({
    queue: `a${'-'.repeat(61)}z`,
    title: 't'.repeat(200),
    body: 'b'.repeat(64 * 1024),
    payload: 'p'.repeat(256 * 1024 - 2),
    max_attempts: 100,
  });
  assert.equal(created, true);
  assert.equal(todo.queue.length, 63);
  assert.equal(todo.title.length, 200);
  assert.equal(todo.body.length, 64 * 1024);
  assert.equal(todo.max_attempts, 100);
  assert.equal((await create({ ...ok, max_attempts: 1 })).todo.max_attempts, 1);
});

test('the lease verbs refuse a lease outside 5..86400 seconds and leave the claim as it was', async (t) => {
  await runCases(t, [
    { name: 'claim 4', field: 'lease_seconds', call: () => claim(deps, agent, { id: waiting.id, lease_seconds: 4 }) },
    {
      name: 'claim 86401',
      field: 'lease_seconds',
      call: () => claim(deps, agent, { id: waiting.id, lease_seconds: 86_401 }),
    },
    { name: 'claim_next 4', field: 'lease_seconds', call: () => claimNext(deps, agent, { lease_seconds: 4 }) },
    { name: 'claim_next 86401', field: 'lease_seconds', call: () => claimNext(deps, agent, { lease_seconds: 86_401 }) },
    { name: 'claim_next 30.5', field: 'lease_seconds', call: () => claimNext(deps, agent, { lease_seconds: 30.5 }) },
    {
      name: 'heartbeat 4',
      field: 'lease_seconds',
      call: () => heartbeat(deps, agent, { id: held.id, lease_seconds: 4 }),
    },
    {
      name: 'heartbeat 86401',
      field: 'lease_seconds',
      call: () => heartbeat(deps, agent, { id: held.id, lease_seconds: 86_401 }),
    },
  ]);
});

test('the lease verbs refuse a missing id, unknown fields and over-large results or errors', async (t) => {
  await runCases(t, [
    { name: 'claim without id', field: 'id', call: () => claim(deps, agent, {}) },
    { name: 'claim with an empty id', field: 'id', call: () => claim(deps, agent, { id: '' }) },
    { name: 'claim_next with a bad queue', field: 'queue', call: () => claimNext(deps, agent, { queue: 'Inbox' }) },
    { name: 'claim_next with colour', field: 'colour', call: () => claimNext(deps, agent, { colour: 'red' }) },
    {
      name: 'heartbeat with an id of 65 characters',
      field: 'id',
      call: () => heartbeat(deps, agent, { id: 'x'.repeat(65) }),
    },
    {
      name: 'complete with colour',
      field: 'colour',
      call: () => complete(deps, agent, { id: held.id, colour: 'red' }),
    },
    {
      name: 'complete with a result over 256 KiB',
      field: 'result',
      call: () => complete(deps, agent, { id: held.id, result: { blob: 'r'.repeat(256 * 1024) } }),
    },
    {
      name: 'fail with an error over 8 KiB',
      field: 'error',
      call: () => fail(deps, agent, { id: held.id, error: 'e'.repeat(8193) }),
    },
    { name: 'fail with a numeric error', field: 'error', call: () => fail(deps, agent, { id: held.id, error: 42 }) },
    {
      name: 'release with lease_seconds',
      field: 'lease_seconds',
      call: () => release(deps, agent, { id: held.id, lease_seconds: 30 }),
    },
  ]);
});

test('list_todos refuses a cursor that is not a todo id, and a limit outside 1..200', async (t) => {
  const scope = { endpointId: endpoint.id, queues: agent.queues };
  const ulid = newId('td').slice(3);
  await runCases(t, [
    { name: 'cursor abc', field: 'cursor', call: () => listTodos(deps, scope, { cursor: 'abc' }) },
    {
      name: 'cursor that is an endpoint id',
      field: 'cursor',
      call: () => listTodos(deps, scope, { cursor: endpoint.id }),
    },
    { name: 'cursor of a bare ULID', field: 'cursor', call: () => listTodos(deps, scope, { cursor: ulid }) },
    {
      name: 'cursor in lowercase',
      field: 'cursor',
      call: () => listTodos(deps, scope, { cursor: `td_${ulid.toLowerCase()}` }),
    },
    {
      name: 'cursor over 64 characters',
      field: 'cursor',
      call: () => listTodos(deps, scope, { cursor: 'c'.repeat(65) }),
    },
    { name: 'limit 0', field: 'limit', call: () => listTodos(deps, scope, { limit: 0 }) },
    { name: 'limit 201', field: 'limit', call: () => listTodos(deps, scope, { limit: 201 }) },
    { name: 'unknown state', field: 'state', call: () => listTodos(deps, scope, { state: 'lost' }) },
  ]);
  const page = await listTodos(deps, scope, { cursor: newId('td') });
  assert.ok(page.todos.length > 0, 'a well-formed todo id is a usable cursor');
});

// PostgreSQL text and jsonb cannot hold U+0000. Validation must refuse it by field; today it
// passes validation and the INSERT/UPDATE fails with a raw DatabaseError (22021 / 22P05).
test('a NUL character in a stored text field answers invalid_argument, not a database error', async (t) => {
  await runCases(t, [
    { name: 'title', field: 'title', call: () => create({ ...ok, title: 'a\u0000b' }) },
    { name: 'body', field: 'body', call: () => create({ ...ok, body: 'a\u0000b' }) },
    { name: 'idempotency_key', field: 'idempotency_key', call: () => create({ ...ok, idempotency_key: 'k\u0000' }) },
    { name: 'payload', field: 'payload', call: () => create({ ...ok, payload: { s: 'a\u0000b' } }) },
    { name: 'fail error', field: 'error', call: () => fail(deps, agent, { id: held.id, error: 'a\u0000b' }) },
    {
      name: 'complete result',
      field: 'result',
      call: () => complete(deps, agent, { id: held.id, result: 'a\u0000b' }),
    },
  ]);
});
