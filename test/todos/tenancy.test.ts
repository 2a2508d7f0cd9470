// Pins who may touch a todo: its owner session, its own endpoint, its granted queues; no oracle.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError, type ErrorCode } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import type { Todo } from '../../src/domain/todo.js';
import type { Endpoint } from '../../src/store/endpoints.js';
import {
  cancel,
  claim,
  claimNext,
  complete,
  createTodo,
  fail,
  getTodo,
  getTodoWithAttempts,
  heartbeat,
  listTodos,
  release,
  retryNow,
  type Agent,
} from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('tenancy');
const deps = depsOf(pool);

async function caught(promise: Promise<unknown>, code: ErrorCode, label = ''): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `${label}: expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, `${label}: ${err.message}`);
    return err;
  }
  assert.fail(`${label}: expected ${code}, but the call succeeded`);
}

async function put(endpoint: Endpoint, queue = 'inbox', title = 'a todo'): Promise<Todo> {
  const { todo } = await createTodo(
    deps,
    { endpointId: endpoint.id },
    { humanId: endpoint.human_id },
    { queue, title },
  );
  return todo;
}

/** Everything stored about a todo: the row and its attempts, to show a refused call wrote nothing. */
async function snapshot(id: string): Promise<unknown> {
  const todo = await pool.query(`SELECT * FROM todos WHERE id = $1`, [id]);
  const attempts = await pool.query(`SELECT * FROM todo_attempts WHERE todo_id = $1 ORDER BY seq`, [id]);
  assert.equal(todo.rowCount, 1);
  return { todo: todo.rows[0], attempts: attempts.rows };
}

/** An error as a client sees it, with the id it was about replaced by a placeholder. */
function shapeOf(err: AppError, id: string): unknown {
  const swap = (text: string) => text.split(id).join('<id>');
  return {
    name: err.name,
    code: err.code,
    message: swap(err.message),
    details: err.details === undefined ? undefined : JSON.parse(swap(JSON.stringify(err.details))),
    cause: err.cause,
    keys: Object.keys(err).sort(),
  };
}

type Verb = (agent: Agent, id: string) => Promise<unknown>;

const LEASE_VERBS: Record<string, Verb> = {
  heartbeat: (agent, id) => heartbeat(deps, agent, { id }),
  complete: (agent, id) => complete(deps, agent, { id, result: { by: agent.sessionId } }),
  fail: (agent, id) => fail(deps, agent, { id, error: 'nope' }),
  release: (agent, id) => release(deps, agent, { id }),
};

const EVERY_VERB: Record<string, Verb> = {
  ...LEASE_VERBS,
  claim: (agent, id) => claim(deps, agent, { id }),
  get_todo: (agent, id) => getTodo(deps, { endpointId: agent.endpointId, queues: agent.queues }, { id }),
};

test('heartbeat, complete, fail and release by another session of the same endpoint answer conflict and change nothing', async () => {
  const endpoint = await makeEndpoint(pool);
  const owner = agentOf(endpoint, 'owner');
  const other = agentOf(endpoint, 'other');
  const todo = await put(endpoint);
  await claim(deps, owner, { id: todo.id });
  const before = await snapshot(todo.id);

  for (const [name, verb] of Object.entries(LEASE_VERBS)) {
    const err = await caught(verb(other, todo.id), 'conflict', name);
    assert.match(err.message, new RegExp(`^cannot ${name}: the todo is claimed by another session`), name);
    assert.deepEqual(err.details, { id: todo.id, state: 'claimed' }, name);
    assert.deepEqual(await snapshot(todo.id), before, `${name} by a non-owner wrote nothing`);
  }

  const { todo: done } = await complete(deps, owner, { id: todo.id });
  assert.equal(done.state, 'done', 'the owner still holds the claim');
});

test("every verb on another endpoint's todo answers not_found exactly like an unknown id", async () => {
  const mine = await makeEndpoint(pool);
  const theirs = await makeEndpoint(pool);
  const owner = agentOf(mine, 'shared-session-id');
  // Same session id on purpose: only the endpoint tells the two apart.
  const intruder = agentOf(theirs, 'shared-session-id');
  const pending = await put(mine, 'inbox', 'pending');
  const held = await put(mine, 'inbox', 'held');
  await claim(deps, owner, { id: held.id });
  const before = [await snapshot(pending.id), await snapshot(held.id)];

  for (const [name, verb] of Object.entries(EVERY_VERB)) {
    for (const target of [pending, held]) {
      const unknown = newId('td');
      const foreign = await caught(verb(intruder, target.id), 'not_found', name);
      const absent = await caught(verb(intruder, unknown), 'not_found', name);
      assert.deepEqual(shapeOf(foreign, target.id), shapeOf(absent, unknown), `${name} on a ${target.title} todo`);
      assert.deepEqual(foreign.details, { id: target.id });
    }
  }

  const operatorVerbs: Record<string, (endpointId: string, id: string) => Promise<unknown>> = {
    cancel: (endpointId, id) => cancel(deps, endpointId, id),
    retry_now: (endpointId, id) => retryNow(deps, endpointId, id),
    get_with_attempts: (endpointId, id) => getTodoWithAttempts(deps, endpointId, id),
  };
  for (const [name, verb] of Object.entries(operatorVerbs)) {
    const unknown = newId('td');
    const foreign = await caught(verb(theirs.id, held.id), 'not_found', name);
    const absent = await caught(verb(theirs.id, unknown), 'not_found', name);
    assert.deepEqual(shapeOf(foreign, held.id), shapeOf(absent, unknown), name);
  }

  assert.deepEqual([await snapshot(pending.id), await snapshot(held.id)], before);
  assert.deepEqual(await claimNext(deps, intruder, {}), { empty: true });
});

test("list_todos never shows another endpoint's todos", async () => {
  const mine = await makeEndpoint(pool, { queues: ['inbox', 'ops'] });
  const theirs = await makeEndpoint(pool, { queues: ['inbox', 'ops'] });
  const theirIds = new Set<string>();
  for (const q of ['inbox', 'ops', 'inbox']) theirIds.add((await put(theirs, q)).id);
  const mineTodo = await put(mine);
  await claim(deps, agentOf(theirs), { id: [...theirIds][0] as string });
  const newestOfTheirs = (await put(theirs, 'inbox', 'newer than mine')).id;
  theirIds.add(newestOfTheirs);

  const agent = agentOf(mine);
  const views = [
    await listTodos(deps, { endpointId: mine.id, queues: agent.queues }, {}),
    await listTodos(deps, { endpointId: mine.id, queues: agent.queues }, { queue: 'inbox' }),
    await listTodos(deps, { endpointId: mine.id, queues: agent.queues }, { state: 'claimed' }),
    await listTodos(deps, { endpointId: mine.id }, {}),
    await listTodos(deps, { endpointId: mine.id }, { queue: 'ops', limit: 200 }),
    await listTodos(deps, { endpointId: mine.id }, { cursor: newestOfTheirs }),
    await listTodos(deps, { endpointId: mine.id }, { include_synthetic: true }),
  ];
  for (const [i, view] of views.entries()) {
    assert.ok(
      view.todos.every((t) => t.endpoint_id === mine.id && !theirIds.has(t.id)),
      `view ${i} shows only this endpoint's todos`,
    );
  }
  assert.deepEqual(
    views[0]?.todos.map((t) => t.id),
    [mineTodo.id],
  );
  assert.deepEqual(
    views[5]?.todos.map((t) => t.id),
    [mineTodo.id],
    "a cursor from another endpoint's id pages only this endpoint's rows",
  );
});

test('an agent cannot see, claim or touch a todo on a queue outside its grant', async () => {
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'secret'] });
  const narrow: Agent = { ...agentOf(endpoint, 'narrow'), queues: ['inbox'] };
  const wide = agentOf(endpoint, 'wide');
  const hidden = await put(endpoint, 'secret', 'hidden');
  const before = await snapshot(hidden.id);

  for (const [name, verb] of Object.entries(EVERY_VERB)) {
    const unknown = newId('td');
    const outside = await caught(verb(narrow, hidden.id), 'not_found', name);
    const absent = await caught(verb(narrow, unknown), 'not_found', name);
    assert.deepEqual(shapeOf(outside, hidden.id), shapeOf(absent, unknown), name);
  }
  assert.deepEqual(await claimNext(deps, narrow, {}), { empty: true });
  const scope = { endpointId: endpoint.id, queues: narrow.queues };
  assert.deepEqual((await listTodos(deps, scope, {})).todos, []);
  assert.deepEqual((await listTodos(deps, scope, { queue: 'secret' })).todos, []);
  assert.deepEqual(await snapshot(hidden.id), before);

  // The same todo is plainly there for the operator and for a session granted the queue.
  assert.deepEqual(
    (await listTodos(deps, { endpointId: endpoint.id }, {})).todos.map((t) => t.id),
    [hidden.id],
  );
  const { todo } = await claim(deps, wide, { id: hidden.id });
  assert.equal(todo.owner_session_id, 'wide');
  // Held by another session, it is still not_found (not conflict) for the narrow agent.
  for (const [name, verb] of Object.entries(EVERY_VERB)) {
    await caught(verb(narrow, hidden.id), 'not_found', name);
  }
});

test('claim_next on a queue outside the grant answers forbidden and claims nothing', async () => {
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'secret'] });
  const narrow: Agent = { ...agentOf(endpoint, 'narrow'), queues: ['inbox'] };
  const hidden = await put(endpoint, 'secret', 'hidden');
  const before = await snapshot(hidden.id);

  for (const queue of ['secret', 'never-granted']) {
    const err = await caught(claimNext(deps, narrow, { queue }), 'forbidden');
    assert.match(err.message, /^queue: /);
    assert.deepEqual(err.details, { field: 'queue', granted: ['inbox'] });
  }
  assert.deepEqual(await snapshot(hidden.id), before);

  const create = createTodo(
    deps,
    { endpointId: endpoint.id, grantedQueues: narrow.queues },
    { endpointId: endpoint.id },
    {
      queue: 'secret',
      title: 'sneaked in',
    },
  );
  await caught(create, 'forbidden');
  const count = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1`, [
    endpoint.id,
  ]);
  assert.equal(count.rows[0]?.n, 1);
});
