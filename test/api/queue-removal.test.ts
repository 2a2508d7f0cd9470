// Pins removing a queue from an endpoint (PATCH /api/v1/endpoints/{ref} remove_queues;
// docs/design/mcp-surface.md, "Changing an endpoint"): an unused queue goes and takes no
// more work; one with live todos, a schedule or a webhook is refused naming what uses it;
// a queue not granted, the last queue, or one both added and removed are refused; a
// canceled todo on a removed queue is not retried onto it. And the race the removal has
// with every insert, proved with real transactions on separate connections: a removal
// holding the endpoint's lock makes an insert waiting behind it write nothing; an insert
// in flight makes the removal waiting behind it see its todo and refuse; 16 pushes racing
// one removal never leave a todo on a queue the endpoint no longer has.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAppError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import { lockQueueUses } from '../../src/store/endpoint-queues.js';
import { updateEndpointSettings } from '../../src/store/endpoints.js';
import { insertTodos } from '../../src/store/todo-bulk.js';
import { insertTodo, type InsertTodoArgs } from '../../src/store/todos.js';
import { barrier } from '../helpers/fixtures.js';
import { apiHarness, expectError, expectStatus, makePeople, vend } from './app.js';

const h = await apiHarness('api_queue_removal');
const { member } = await makePeople(h);
const pool = h.pool;

const path = (slug: string) => `/api/v1/endpoints/${slug}`;
const remove = (slug: string, queues: string[], extra: Record<string, unknown> = {}) =>
  h.request('PATCH', path(slug), { token: member.token, body: { remove_queues: queues, ...extra } });

function args(endpointId: string, queue: string): InsertTodoArgs {
  return {
    endpointId,
    id: newId('td'),
    queue,
    title: 'raced',
    body: '',
    payload: undefined,
    kind: null,
    source: 'api',
    createdByHumanId: null,
    createdByEndpointId: null,
    idempotencyKey: null,
    maxAttempts: 3,
  };
}

async function todosOn(endpointId: string, queue: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND queue = $2`,
    [endpointId, queue],
  );
  return res.rows[0]?.n ?? 0;
}

/** Whether the promise is still unsettled after a while (it waits on a lock). */
async function stillWaiting(p: Promise<unknown>): Promise<boolean> {
  const settled = await Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    sleep(300).then(() => false),
  ]);
  return !settled;
}

test('an unused queue is removed and takes no more work; pushes and claims on it are refused', async () => {
  const vended = await vend(h, member, { queues: ['inbox', 'old'] });
  const slug = vended.endpoint.slug;
  const done = await remove(slug, ['old']);
  expectStatus(done, 200, 'remove');
  assert.deepEqual(done.body.endpoint.queues, ['inbox']);
  expectError(
    await h.post(`${path(slug)}/todos`, { token: member.token, body: { queue: 'old', title: 'x' } }),
    400,
    'invalid_argument',
    'queue',
  );
  // Added back, it works again.
  const back = await h.request('PATCH', path(slug), { token: member.token, body: { add_queues: ['old'] } });
  assert.deepEqual(back.body.endpoint.queues, ['inbox', 'old']);
  expectStatus(
    await h.post(`${path(slug)}/todos`, { token: member.token, body: { queue: 'old', title: 'x' } }),
    201,
    'push after re-adding',
  );
});

test('a queue with a live todo, a schedule or a webhook is refused, naming what uses it; nothing changes', async () => {
  const vended = await vend(h, member, { queues: ['inbox', 'busy', 'timed', 'hooked'] });
  const slug = vended.endpoint.slug;
  expectStatus(
    await h.post(`${path(slug)}/todos`, { token: member.token, body: { queue: 'busy', title: 'live' } }),
    201,
    'push',
  );
  expectStatus(
    await h.post(`${path(slug)}/schedules`, {
      token: member.token,
      body: { queue: 'timed', cron: '0 9 * * *', tz: 'UTC', title: 'daily' },
    }),
    201,
    'schedule',
  );
  expectStatus(
    await h.post(`${path(slug)}/webhooks`, { token: member.token, body: { queue: 'hooked' } }),
    201,
    'webhook',
  );
  const refused = await remove(slug, ['busy', 'timed', 'hooked']);
  expectError(refused, 409, 'failed_precondition', 'remove_queues');
  assert.match(
    refused.body.error.message,
    /"busy" has 1 live todo; "timed" has 1 schedule; "hooked" has 1 webhook: finish or cancel/,
  );
  const shown = await h.get(path(slug), { token: member.token });
  assert.deepEqual(shown.body.endpoint.queues, ['inbox', 'busy', 'timed', 'hooked']);

  // Canceled, the todo no longer holds the queue; but it is not retried onto a removed one.
  const todo = (await h.get(`${path(slug)}/todos?queue=busy`, { token: member.token })).body.todos[0];
  expectStatus(await h.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token }), 200, 'cancel');
  expectStatus(await remove(slug, ['busy']), 200, 'remove after cancel');
  const retry = await h.post(`/api/v1/todos/${todo.id}/retry`, { token: member.token });
  expectError(retry, 409, 'conflict');
  assert.match(retry.body.error.message, /queue "busy" is no longer one of the endpoint's queues/);
  const row = await pool.query(`SELECT state FROM todos WHERE id = $1`, [todo.id]);
  assert.equal(row.rows[0]?.state, 'canceled');
});

test('a queue not granted, the last queue, and one both added and removed are refused naming remove_queues', async () => {
  const vended = await vend(h, member, { queues: ['inbox'] });
  const slug = vended.endpoint.slug;
  expectError(await remove(slug, ['nope']), 400, 'invalid_argument', 'remove_queues');
  expectError(await remove(slug, ['inbox']), 400, 'invalid_argument', 'remove_queues');
  expectError(await remove(slug, ['inbox'], { add_queues: ['inbox'] }), 400, 'invalid_argument', 'remove_queues');
  // Swapping the only queue for another in one edit is fine.
  const swapped = await remove(slug, ['inbox'], { add_queues: ['next'] });
  expectStatus(swapped, 200, 'swap');
  assert.deepEqual(swapped.body.endpoint.queues, ['next']);
});

test('a removal holding the lock makes the insert waiting behind it write nothing, single and bulk', async () => {
  const vended = await vend(h, member, { queues: ['inbox', 'going'] });
  const id = vended.endpoint.id;
  const removal = await pool.connect();
  try {
    await removal.query('BEGIN');
    assert.deepEqual(await lockQueueUses(removal, id, ['going']), [
      { queue: 'going', todos: 0, schedules: 0, webhooks: 0 },
    ]);
    await updateEndpointSettings(removal, member.human.id, id, { removeQueues: ['going'] });
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (err: unknown) => err,
      );
    const single = outcome(insertTodo(pool, args(id, 'going'), 3600));
    const bulk = outcome(insertTodos(pool, id, [args(id, 'inbox'), args(id, 'going')], 3600));
    assert.ok(await stillWaiting(single), 'the insert waits for the removal');
    await removal.query('COMMIT');
    for (const err of await Promise.all([single, bulk])) {
      assert.ok(isAppError(err, 'forbidden') && /"going"/.test(err.message), String(err));
    }
  } finally {
    removal.release();
  }
  assert.equal(await todosOn(id, 'going'), 0);
  assert.equal(await todosOn(id, 'inbox'), 0, 'the bulk wrote none of its rows');
});

test('an insert in flight makes the removal waiting behind it see its todo and refuse', async () => {
  const vended = await vend(h, member, { queues: ['inbox', 'going'] });
  const slug = vended.endpoint.slug;
  const inserting = await pool.connect();
  try {
    await inserting.query('BEGIN');
    await insertTodo(inserting, args(vended.endpoint.id, 'going'), 3600);
    const removal = remove(slug, ['going']);
    assert.ok(await stillWaiting(removal), 'the removal waits for the insert');
    await inserting.query('COMMIT');
    const refused = await removal;
    expectError(refused, 409, 'failed_precondition', 'remove_queues');
    assert.match(refused.body.error.message, /"going" has 1 live todo/);
  } finally {
    inserting.release();
  }
  const shown = await h.get(path(slug), { token: member.token });
  assert.deepEqual(shown.body.endpoint.queues, ['inbox', 'going']);
});

test('16 pushes racing one removal never leave a todo on a queue the endpoint no longer has', async () => {
  for (let round = 0; round < 4; round++) {
    const vended = await vend(h, member, { queues: ['inbox', 'going'] });
    const { id, slug } = vended.endpoint;
    const start = barrier(17);
    const pushes = Array.from({ length: 16 }, async () => {
      await start();
      return insertTodo(pool, args(id, 'going'), 3600).then(
        () => 'written',
        (err: unknown) => {
          if (isAppError(err, 'forbidden')) return 'refused';
          throw err;
        },
      );
    });
    const removal = (async () => {
      await start();
      return remove(slug, ['going']);
    })();
    const [outcomes, removed] = await Promise.all([Promise.all(pushes), removal]);
    const queues = (await h.get(path(slug), { token: member.token })).body.endpoint.queues as string[];
    const written = outcomes.filter((o) => o === 'written').length;
    assert.equal(await todosOn(id, 'going'), written, `round ${round}: every answer is true`);
    if (removed.status === 200) {
      assert.deepEqual(queues, ['inbox'], `round ${round}`);
      assert.equal(written, 0, `round ${round}: removed, so no todo may be on it`);
    } else {
      expectError(removed, 409, 'failed_precondition', 'remove_queues', `round ${round}`);
      assert.ok(written > 0, `round ${round}: refused only because a todo landed first`);
      assert.deepEqual(queues, ['inbox', 'going'], `round ${round}`);
    }
  }
});
