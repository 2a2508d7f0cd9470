// Pins the store-level synthetic filter (docs/design/doorbell-acknowledgement.md,
// "Synthetic todos"): every exported todo query of the store is listed here and called
// beside a synthetic todo that would otherwise match it; the ones that read or move todos
// never return or touch it, and a new export fails this test until it is classified.
// Reads by id are the documented opt-in, like claim by id.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import * as claimsBatch from '../../src/store/claims-batch.js';
import * as claims from '../../src/store/claims.js';
import * as rings from '../../src/store/rings.js';
import * as operator from '../../src/store/todo-operator.js';
import * as sweeps from '../../src/store/todo-sweeps.js';
import * as bulk from '../../src/store/todo-bulk.js';
import * as idempotency from '../../src/store/todo-idempotency.js';
import * as settlesBatch from '../../src/store/settles-batch.js';
import * as todosBatch from '../../src/store/todos-batch.js';
import * as todos from '../../src/store/todos.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('synthetic');
const endpoint = await makeEndpoint(pool);
const E = endpoint.id;
const S = 'ms_owner';

/** A todo row as a query would find it: claimable, due, old, rung once, sent by a human. */
async function row(state: string, synthetic: boolean, extra = ''): Promise<string> {
  const id = newId('td');
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, state, attempt, owner_session_id, lease_expires_at,
       next_retry_at, ready_at, created_by_human_id, synthetic, ring_attempts, last_ringed_at, created_at, updated_at,
       completed_at)
     VALUES ($1, $2, 'inbox', $3, $4, CASE WHEN $4 = 'pending' THEN 0 ELSE 1 END, $5,
       CASE WHEN $4 = 'claimed' THEN now() - interval '1 hour' END,
       CASE WHEN $4 = 'failed' THEN now() - interval '1 hour' END,
       CASE WHEN $4 IN ('pending', 'claimed', 'failed') THEN now() - interval '2 hours' END,
       'hu_sender', $6, 1, now() - interval '2 hours', now() - interval '7 hours', now() - interval '40 days',
       CASE WHEN $4 = 'done' THEN now() - interval '40 days' END) ${extra}`,
    [E, id, `${state}${synthetic ? ' synthetic' : ''}`, state, state === 'claimed' ? S : null, synthetic],
  );
  return id;
}

async function stateOf(id: string): Promise<string | undefined> {
  return (await pool.query('SELECT state FROM todos WHERE endpoint_id = $1 AND id = $2', [E, id])).rows[0]?.state as
    string | undefined;
}

/** A create's row, as the use case would build it. */
const insertArgs = (title: string, idempotencyKey: string | null) => ({
  endpointId: E,
  id: newId('td'),
  queue: 'inbox',
  title,
  body: '',
  payload: null,
  kind: null,
  source: null,
  createdByHumanId: 'hu_x',
  createdByEndpointId: null,
  idempotencyKey,
  maxAttempts: 5,
});

const owned = (id: string) => ({ endpointId: E, id, sessionId: S });
const claimArgs = { endpointId: E, queues: ['inbox'], sessionId: 'ms_claimer', leaseSeconds: 60 };

/** Each export: what it does with a synthetic todo. */
const CHECKS: Record<string, () => Promise<void>> = {
  'todos.listTodos': async () => {
    const [real, fake] = [await row('pending', false), await row('pending', true)];
    const page = { queues: null, state: null, limit: 1000, before: null };
    const ids = (await todos.listTodos(pool, E, { ...page, includeSynthetic: false })).map((t) => t.id);
    assert.ok(ids.includes(real) && !ids.includes(fake));
    const all = (await todos.listTodos(pool, E, { ...page, includeSynthetic: true })).map((t) => t.id);
    assert.ok(all.includes(fake), 'include_synthetic is the opt-in');
  },
  'claims.claimNext': async () => {
    const fake = await row('pending', true);
    for (
      let [claimed] = await claims.claimNext(pool, claimArgs);
      claimed;
      [claimed] = await claims.claimNext(pool, claimArgs)
    ) {
      assert.notEqual(claimed.id, fake);
    }
    assert.equal(await stateOf(fake), 'pending');
  },
  'claims.anyClaimable': async () => {
    await pool.query(`DELETE FROM todos WHERE endpoint_id = $1 AND NOT synthetic`, [E]);
    await row('pending', true);
    assert.equal(await claims.anyClaimable(pool, { endpointId: E, queues: ['inbox'] }), false);
    await row('pending', false);
    assert.equal(await claims.anyClaimable(pool, { endpointId: E, queues: ['inbox'] }), true);
  },
  'claims.claimById': async () => {
    const fake = await row('pending', true);
    assert.deepEqual(await claims.claimById(pool, { ...claimArgs, id: fake }), []);
  },
  // The statement builders: both claim statements (probe and the budgeted admit) pick
  // through the claimable predicate, which leaves synthetic todos out; claimSql only
  // wraps the pick it is given.
  'claims.nextSql': async () => {
    for (const mode of ['probe', 'admit'] as const) assert.match(claims.nextSql('true', mode), /NOT t\.synthetic/);
  },
  'claims.byIdSql': async () => {
    for (const mode of ['probe', 'admit'] as const) assert.match(claims.byIdSql(mode), /NOT t\.synthetic/);
  },
  // Reads rings only: the todo it names is the one the claim statement just picked.
  'claims.ackedRingsOf': async () => assert.doesNotMatch(claims.ackedRingsOf('$3'), /FROM todos/),
  'claimsBatch.nextManySql': async () => assert.match(claimsBatch.nextManySql('true'), /NOT t\.synthetic/),
  'claimsBatch.claimNextMany': async () => {
    const fake = await row('pending', true);
    const callers = [
      { sessionId: 'ms_a', leaseSeconds: 60 },
      { sessionId: 'ms_b', leaseSeconds: 60 },
    ];
    for (;;) {
      const answers = await claimsBatch.claimNextMany(pool, E, ['inbox'], callers);
      const ids = answers.flat().map((t) => t.id);
      assert.ok(!ids.includes(fake));
      if (ids.length === 0) break;
    }
    assert.equal(await stateOf(fake), 'pending');
  },
  'settlesBatch.heartbeatMany': async () =>
    assert.deepEqual(
      await settlesBatch.heartbeatMany(pool, [{ ...owned(await row('claimed', true)), leaseSeconds: 60 }]),
      [null],
    ),
  'settlesBatch.completeMany': async () =>
    assert.deepEqual(await settlesBatch.completeMany(pool, [{ ...owned(await row('claimed', true)), result: null }]), [
      null,
    ]),
  'settlesBatch.failMany': async () =>
    assert.deepEqual(
      await settlesBatch.failMany(pool, [
        {
          ...owned(await row('claimed', true)),
          error: null,
          result: null,
          backoff: { baseSeconds: 30, maxSeconds: 30 },
          jitter: 0,
        },
      ]),
      [null],
    ),
  'settlesBatch.releaseMany': async () =>
    assert.deepEqual(await settlesBatch.releaseMany(pool, [owned(await row('claimed', true))]), [null]),
  'claims.claimSql': async () => {
    const sql = claims.claimSql(() => 'SELECT endpoint_id, id FROM picked_marker', 'probe', '$5');
    assert.match(sql, /picked_marker/);
  },
  'claims.heartbeat': async () =>
    assert.equal(await claims.heartbeat(pool, { ...owned(await row('claimed', true)), leaseSeconds: 60 }), null),
  'claims.complete': async () =>
    assert.equal(await claims.complete(pool, { ...owned(await row('claimed', true)), result: null }), null),
  'claims.fail': async () =>
    assert.equal(
      await claims.fail(pool, {
        ...owned(await row('claimed', true)),
        error: null,
        result: null,
        backoff: { baseSeconds: 30, maxSeconds: 30 },
        jitter: 0,
      }),
      null,
    ),
  'claims.release': async () => assert.equal(await claims.release(pool, owned(await row('claimed', true))), null),
  'sweeps.reapExpired': async () => {
    const [real, fake] = [await row('claimed', false), await row('claimed', true)];
    await sweeps.reapExpired(pool, 1000);
    assert.equal(await stateOf(real), 'pending');
    assert.equal(await stateOf(fake), 'claimed');
  },
  'sweeps.requeueDueRetries': async () => {
    const [real, fake] = [await row('failed', false), await row('failed', true)];
    await sweeps.requeueDueRetries(pool, 1000);
    assert.equal(await stateOf(real), 'pending');
    assert.equal(await stateOf(fake), 'failed');
  },
  'sweeps.pruneTerminal': async () => {
    const [real, fake] = [await row('done', false), await row('done', true)];
    await sweeps.pruneTerminal(pool, 86_400, 1000);
    assert.equal(await stateOf(real), undefined);
    assert.equal(await stateOf(fake), 'done', 'synthetic todos go with their test, not with retention');
  },
  'operator.retryNow': async () => assert.equal(await operator.retryNow(pool, E, await row('failed', true)), null),
  'operator.cancel': async () => assert.equal(await operator.cancel(pool, E, await row('pending', true)), null),
  'rings.claimRings': async () => {
    await pool.query(
      `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel) VALUES ($1, 'ms_stream', 'x', true, true)
       ON CONFLICT DO NOTHING`,
      [E],
    );
    const fake = await row('pending', true);
    for (const reason of [
      { kind: 'attach', sessionId: 'ms_stream' },
      { kind: 'rering', scheduleSeconds: [300, 1200, 3600, 21_600] },
      { kind: 'ready', queue: 'inbox' },
      { kind: 'waiting' },
    ] satisfies rings.RingReason[]) {
      await pool.query(
        `UPDATE todos SET updated_at = now(), last_ringed_at = now() - interval '2 hours' WHERE id = $1`,
        [fake],
      );
      const rung = await rings.claimRings(pool, { endpointId: E, maxRings: 6, limit: 1000, reason });
      assert.ok(!rung.some((t) => t.id === fake), `no ${reason.kind} ring for a synthetic todo`);
    }
  },
  'rings.endpointsWithOpenStreams': async () => {
    // Reads sessions, not todos: a synthetic todo cannot put an endpoint on the re-ring list.
    await pool.query(`UPDATE mcp_sessions SET stream_open = false WHERE endpoint_id = $1`, [E]);
    await row('pending', true);
    assert.ok(!(await rings.endpointsWithOpenStreams(pool)).includes(E));
  },
  'rings.publishRing': async () => {
    await rings.publishRing(pool, {
      instance: 'x',
      endpoint_id: E,
      session_id: 's',
      params: { note: 'a NOTIFY payload' },
    });
  },
  'todos.insertTodo': async () => {
    const { todo } = await todos.insertTodo(pool, insertArgs('real', null), 86_400);
    assert.equal(todo.synthetic, false, 'the normal create never makes a synthetic todo');
  },
  'bulk.insertTodos': async () => {
    const [row] = await bulk.insertTodos(pool, E, [insertArgs('real bulk', null)], 86_400);
    assert.equal(row?.todo.synthetic, false, 'the bulk create never makes a synthetic todo');
  },
  'todosBatch.insertTodosBatch': async () => {
    // A finished todo holds its key for the window; a synthetic one does not.
    const fake = await row('done', true);
    await pool.query(`UPDATE todos SET idempotency_key = 'synthetic-batch-key' WHERE endpoint_id = $1 AND id = $2`, [
      E,
      fake,
    ]);
    const [created] = await todosBatch.insertTodosBatch(
      pool,
      E,
      [insertArgs('real batch', 'synthetic-batch-key')],
      86_400,
    );
    assert.equal(created?.created, true);
    assert.notEqual(created?.todo.id, fake);
    assert.equal(created?.todo.synthetic, false, 'the batched create never makes a synthetic todo');
  },
  'idempotency.findKeyHolder': async () => {
    const fake = await row('pending', true);
    await pool.query(`UPDATE todos SET idempotency_key = 'synthetic-key' WHERE endpoint_id = $1 AND id = $2`, [
      E,
      fake,
    ]);
    assert.equal(await idempotency.findKeyHolder(pool, E, 'synthetic-key', 86_400), null);
  },
  'idempotency.holdsKey': async () => {
    assert.match(idempotency.holdsKey('$9'), /NOT t\.synthetic/);
  },
  // Reads by id: the caller names the todo (the doorbell told the agent its id), which is
  // the same explicit opt-in as claiming it by id.
  'todos.getTodo': async () => assert.ok(await todos.getTodo(pool, { endpointId: E }, await row('pending', true))),
  'todos.probeTodo': async () => assert.ok(await todos.probeTodo(pool, { endpointId: E }, await row('pending', true))),
  'todos.listAttempts': async () => assert.deepEqual(await todos.listAttempts(pool, E, await row('pending', true)), []),
  'todos.findTodoEndpoint': async () =>
    assert.equal(await todos.findTodoEndpoint(pool, endpoint.human_id, await row('pending', true)), E),
};

test('every exported todo query of the store is classified here', () => {
  const modules = { claims, claimsBatch, rings, operator, sweeps, settlesBatch, todos, todosBatch, bulk, idempotency };
  const exported = Object.entries(modules).flatMap(([name, m]) =>
    Object.entries(m)
      .filter(([, v]) => typeof v === 'function')
      .map(([fn]) => `${name}.${fn}`),
  );
  assert.deepEqual(exported.sort(), Object.keys(CHECKS).sort());
});

for (const [name, check] of Object.entries(CHECKS)) {
  test(`${name} leaves synthetic todos out (or reads one only when named by id)`, check);
}
