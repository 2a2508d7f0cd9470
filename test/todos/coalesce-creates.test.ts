// Pins the create lane (docs/design/coalescing.md, "Creates"): racing creates of one
// endpoint share one insert statement and each caller is answered with its own todo; keys
// in one batch behave as racing single calls; a bad input fails only its caller; a batch
// sends one todo_ready, and the long-poll waiters it wakes still each get a todo; a create
// on a transaction's client never joins the lane.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHANNEL, NotifyBus, eventPayload, type BusEvent } from '../../src/db/bus.js';
import type { Queryable } from '../../src/db/pool.js';
import { inTransaction } from '../../src/db/tx.js';
import { isAppError } from '../../src/domain/errors.js';
import { Metrics } from '../../src/metrics/index.js';
import { coalescing, type Coalescing } from '../../src/todos/coalesce.js';
import { insertArgs } from '../../src/todos/create.js';
import { Waiters } from '../../src/todos/waiters.js';
import { claimNext, createTodo, type ClaimNextResult, type TodoDeps } from '../../src/todos/index.js';
import { parseInput, createTodoInput } from '../../src/domain/todo.js';
import type { InsertTodoArgs } from '../../src/store/todos.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, makeEndpoint } from '../helpers/fixtures.js';

const db = await testDatabase('coalesce_creates', 40);
const WINDOW = 86_400;

/** The lanes with a metrics registry, to read how many calls each insert statement served. */
function lanesOn(pool: Queryable): {
  lanes: Coalescing;
  batches: () => Promise<{ statements: number; calls: number }>;
} {
  const metrics = new Metrics({ defaults: false });
  const lanes = coalescing(pool, { maxBatch: 32, metrics }) as Coalescing;
  const batches = async () => {
    const { values } = await metrics.coalescedCalls.get();
    const of = (suffix: string) =>
      values.find((v) => v.labels.statement === 'insert_todo' && v.metricName?.endsWith(suffix))?.value ?? 0;
    return { statements: of('_count'), calls: of('_sum') };
  };
  return { lanes, batches };
}

/** A row as the create use case builds it, for calling the lane directly. */
function row(endpointId: string, humanId: string, input: Record<string, unknown>): InsertTodoArgs {
  const data = parseInput(createTodoInput, { queue: 'inbox', ...input });
  return insertArgs(endpointId, { humanId }, data, null);
}

test('32 racing creates share insert statements, and each caller gets its own todo', async () => {
  const endpoint = await makeEndpoint(db.pool);
  // The lanes, counting the calls that entered them: once all 32 have, every create is in
  // the lane (the first one alone, reading its room and inserting; the rest queued).
  const { lanes: inner, batches } = lanesOn(db.pool);
  let entered = 0;
  const lanes: Coalescing = {
    ...inner,
    insertTodo: (...args) => {
      entered += 1;
      return inner.insertTodo(...args);
    },
  };
  const deps: TodoDeps = { db: db.pool, defaultLeaseSeconds: 300, coalesce: lanes };
  // The endpoint row locked FOR UPDATE holds the first insert (it takes FOR KEY SHARE), so
  // the other 31 queue behind it, whatever the machine's timing.
  const lock = await db.pool.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE', [endpoint.id]);
  const ready = barrier(32);
  const creates = Array.from({ length: 32 }, async (_, i) => {
    await ready();
    return createTodo(
      deps,
      { endpointId: endpoint.id },
      { endpointId: endpoint.id },
      { queue: 'inbox', title: `t${i}` },
    );
  });
  try {
    while (entered < 32) await new Promise((r) => setTimeout(r, 5));
  } finally {
    await lock.query('COMMIT');
    lock.release();
  }
  const made = await Promise.all(creates);
  made.forEach((m, i) => {
    assert.equal(m.created, true);
    assert.equal(m.todo.title, `t${i}`, 'each caller is answered with its own todo');
    assert.equal(m.todo.state, 'pending');
  });
  assert.equal(new Set(made.map((m) => m.todo.id)).size, 32);
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.equal(rows[0]?.n, 32);
  const served = await batches();
  assert.equal(served.calls, 32);
  assert.equal(served.statements, 2, 'the first alone, the 31 queued behind it in one statement');
});

test('the live-todo quota holds in a batch: rows past the room run alone and are refused with the quota', async () => {
  const endpoint = await makeEndpoint(db.pool);
  const { lanes, batches } = lanesOn(db.pool);
  const LIMIT = 4;
  // Submitted together: the first runs alone (its room read, then its insert), the other 7
  // queue behind it and go in one statement, which reads the room once: 4 - 1 = 3 fit.
  const answers = Array.from({ length: 8 }, (_, i) =>
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: `q${i}` }), WINDOW, LIMIT).then(
      (made) => made.todo.title,
      (err: unknown) => (isAppError(err) ? err.code : err),
    ),
  );
  const got = await Promise.all(answers);
  assert.deepEqual(
    got,
    ['q0', 'q1', 'q2', 'q3', ...Array(4).fill('resource_exhausted')],
    'callers in order fill the room',
  );
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.equal(rows[0]?.n, LIMIT, 'never past the quota');
  assert.equal((await batches()).statements, 2, 'the first alone, the other 7 in one statement');
});

test('keys in one batch behave as racing single calls: one creates, the other finds it; a held key answers its holder', async () => {
  const endpoint = await makeEndpoint(db.pool);
  const { lanes, batches } = lanesOn(db.pool);
  const held = await lanes.insertTodo(
    row(endpoint.id, endpoint.human_id, { title: 'held', idempotency_key: 'old' }),
    WINDOW,
    null,
  );
  await db.pool.query(`UPDATE todos SET state = 'done', completed_at = now() WHERE id = $1`, [held.todo.id]);
  // Submitted together: the first runs alone, the rest queue and go in one statement.
  const [first, a, b, c, d] = await Promise.all([
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: 'first' }), WINDOW, null),
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: 'a', idempotency_key: 'k' }), WINDOW, null),
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: 'b', idempotency_key: 'k' }), WINDOW, null),
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: 'c', idempotency_key: 'old' }), WINDOW, null),
    lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: 'd' }), WINDOW, null),
  ]);
  assert.equal(first?.created, true);
  assert.equal(a?.created, true);
  assert.equal(a?.todo.title, 'a');
  assert.equal(b?.created, false, 'the second with the key finds the first');
  assert.equal(b?.todo.id, a?.todo.id);
  assert.equal(c?.created, false, 'a terminal holder within the window keeps its key');
  assert.equal(c?.todo.id, held.todo.id);
  assert.equal(d?.created, true);
  assert.equal(d?.todo.title, 'd');
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND idempotency_key = 'k'`,
    [endpoint.id],
  );
  assert.equal(rows[0]?.n, 1);
  assert.deepEqual(await batches(), { statements: 3, calls: 6 });
});

test('a failing input fails only its caller: bad data, a constraint, a queue not granted', async () => {
  const endpoint = await makeEndpoint(db.pool);
  const { lanes, batches } = lanesOn(db.pool);
  const good = (title: string) => lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title }), WINDOW, null);
  const nul = row(endpoint.id, endpoint.human_id, { title: 'x' });
  nul.title = 'nul \u0000 byte';
  const range = row(endpoint.id, endpoint.human_id, { title: 'y' });
  range.priority = 101;
  const elsewhere = row(endpoint.id, endpoint.human_id, { title: 'z', queue: 'not-granted' });
  const calls = [
    good('first'),
    good('g1'),
    lanes.insertTodo(nul, WINDOW, null),
    good('g2'),
    lanes.insertTodo(range, WINDOW, null),
    lanes.insertTodo(elsewhere, WINDOW, null),
    good('g3'),
  ];
  const settled = await Promise.allSettled(calls);
  const titles = settled.map((s) => (s.status === 'fulfilled' ? s.value.todo.title : null));
  assert.deepEqual(titles, ['first', 'g1', null, 'g2', null, null, 'g3']);
  const reason = (i: number) => (settled[i] as PromiseRejectedResult).reason as { code?: string };
  assert.equal(reason(2).code, '22021', 'the NUL byte is its caller’s data exception');
  assert.equal(reason(4).code, '23514', 'the priority out of range is its caller’s check violation');
  const gone = reason(5);
  assert.ok(isAppError(gone) && gone.code === 'forbidden', 'the queue not granted answers as a lone create');
  const { rows } = await db.pool.query<{ title: string }>(
    'SELECT title FROM todos WHERE endpoint_id = $1 ORDER BY title',
    [endpoint.id],
  );
  assert.deepEqual(
    rows.map((r) => r.title),
    ['first', 'g1', 'g2', 'g3'],
  );
  assert.equal((await batches()).calls >= 7, true);
});

test('a batched create sends one todo_ready, and the long-poll waiters it wakes each claim a todo', async () => {
  const endpoint = await makeEndpoint(db.pool);
  const bus = new NotifyBus({ url: db.url });
  await bus.start();
  const waiters = new Waiters({ maxPerEndpoint: 20, fallbackMs: 60_000 });
  const unlisten = waiters.listen(bus);
  const notices: BusEvent[] = [];
  let markerSeen = false;
  const off = bus.subscribe('todo_ready', (e) => {
    if (e.endpoint_id === endpoint.id) notices.push(e);
    if (e.endpoint_id === `marker-${endpoint.id}`) markerSeen = true;
  });
  try {
    const deps: TodoDeps = { db: db.pool, defaultLeaseSeconds: 300 };
    const claims: Promise<ClaimNextResult>[] = Array.from({ length: 6 }, (_, i) =>
      claimNext(deps, agentOf(endpoint, `waiter-${i}`), { wait_seconds: 30 }, { waiters }),
    );
    while (waiters.waiting(endpoint.id) < 6) await new Promise((r) => setTimeout(r, 5));
    const { lanes, batches } = lanesOn(db.pool);
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        lanes.insertTodo(row(endpoint.id, endpoint.human_id, { title: `w${i}` }), WINDOW, null),
      ),
    );
    assert.deepEqual(await batches(), { statements: 2, calls: 6 }, 'one alone, then five in one statement');
    const claimed = await Promise.all(claims);
    const ids = claimed.map((c) => ('todo' in c ? c.todo.id : null));
    assert.ok(
      ids.every((id) => id !== null),
      'every waiter was woken and claimed',
    );
    assert.deepEqual(new Set(ids), new Set(made.map((m) => m.todo.id)));
    // Notices arrive in commit order: once the marker sent after the creates is heard, all are.
    await db.pool.query('SELECT pg_notify($1, $2)', [
      CHANNEL,
      eventPayload('todo_ready', { endpoint_id: `marker-${endpoint.id}`, queue: 'inbox' }),
    ]);
    while (!markerSeen) await new Promise((r) => setTimeout(r, 5));
    assert.equal(notices.length, 2, 'one todo_ready for the lone insert, one for the batch of five');
  } finally {
    off();
    unlisten();
    waiters.close();
    await bus.stop();
  }
});

test('a create on a transaction’s client never joins the lane: it commits or rolls back with its transaction', async () => {
  const endpoint = await makeEndpoint(db.pool);
  const { lanes, batches } = lanesOn(db.pool);
  await assert.rejects(
    inTransaction(db.pool, async (tx) => {
      const deps: TodoDeps = { db: tx, defaultLeaseSeconds: 300, coalesce: lanes };
      await createTodo(
        deps,
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title: 't' },
      );
      throw new Error('roll back');
    }),
    /roll back/,
  );
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.equal(rows[0]?.n, 0);
  assert.deepEqual(await batches(), { statements: 0, calls: 0 });
});
