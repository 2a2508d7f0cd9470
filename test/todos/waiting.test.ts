// Pins the derived `waiting` of docs/design/todos.md ("Why is it waiting") at the use
// cases every surface calls: each reason, their precedence, the count ahead in claim order
// (claim rank, then ready_at; ties not counted) and its 1000+ bound, no `waiting` on a todo
// that does not wait, and a fixed number of statements per read whatever its size.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pool } from '../../src/db/pool.js';
import type { Queryable } from '../../src/db/pool.js';
import { setPolicy } from '../../src/budgets/service.js';
import { insertSession } from '../../src/store/sessions.js';
import { claimNext, createTodo, getTodo, listTodos, type ReadTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('todo_waiting');
const deps = depsOf(pool);

/** An endpoint, by default with one live MCP session (a consumer of its queues). */
async function endpointWith(o: { queues?: string[]; session?: boolean } = {}) {
  const endpoint = await makeEndpoint(pool, { queues: o.queues ?? ['inbox'] });
  if (o.session !== false) {
    await insertSession(pool, {
      endpointId: endpoint.id,
      id: `s-${endpoint.id}`,
      clientName: null,
      clientVersion: null,
      instance: 'i',
    });
  }
  const push = async (queue = 'inbox', title = 'work') =>
    (await createTodo(deps, { endpointId: endpoint.id }, { humanId: endpoint.human_id }, { queue, title })).todo;
  const read = async (id: string) => (await getTodo(deps, { endpointId: endpoint.id }, { id })).todo;
  return { endpoint, push, read };
}

/** Sets claim-order keys directly: priority, and ready_at as seconds from now (null: not ready). */
async function keys(db: Pool, id: string, priority: number, readyInSeconds: number | null): Promise<void> {
  await db.query(
    `UPDATE todos SET priority = $2,
       ready_at = CASE WHEN $3::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $3::float8) END
     WHERE id = $1`,
    [id, priority, readyInSeconds],
  );
}

test('a pending todo with a future not_before and no ready_at waits as scheduled until not_before', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  const { rows } = await pool.query<{ nb: Date }>(
    `UPDATE todos SET not_before = now() + interval '1 hour', ready_at = NULL WHERE id = $1 RETURNING not_before AS nb`,
    [todo.id],
  );
  const read = await e.read(todo.id);
  assert.deepEqual(read.waiting, { reason: 'scheduled', until: rows[0]?.nb.toISOString() });
});

test('a failed todo whose retry is not yet due waits as retry_backoff until next_retry_at', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  const { rows } = await pool.query<{ at: Date }>(
    `UPDATE todos SET state = 'failed', attempt = 1, next_retry_at = now() + interval '10 minutes',
       ready_at = now() + interval '10 minutes' WHERE id = $1 RETURNING next_retry_at AS at`,
    [todo.id],
  );
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'retry_backoff', until: rows[0]?.at.toISOString() });
});

test('a failed todo whose retry is due is ready work: it waits as queued like a pending one', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  await pool.query(
    `UPDATE todos SET state = 'failed', attempt = 1, next_retry_at = now() - interval '1 second',
       ready_at = now() - interval '1 second' WHERE id = $1`,
    [todo.id],
  );
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'queued', ahead: 0 });
});

test('an endpoint clocked out until an instant makes its pending todos wait as presence_out until then', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  const { rows } = await pool.query<{ until: Date }>(
    `UPDATE endpoints SET presence_override = 'out', override_until = now() + interval '2 hours', override_by = 'agent'
      WHERE id = $1 RETURNING override_until AS until`,
    [e.endpoint.id],
  );
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'presence_out', until: rows[0]?.until.toISOString() });
});

test('off shift, presence_out names the next shift start; clocked out with no end and no shift, no instant', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  const hourStart = (ms: number) => Math.floor(ms / 3_600_000) * 3_600_000;
  const before = hourStart(Date.now());
  const hh = (h: number) => String(((h % 24) + 24) % 24).padStart(2, '0');
  const h = new Date(before).getUTCHours();
  await pool.query(`UPDATE endpoints SET shift = $2 WHERE id = $1`, [e.endpoint.id, `${hh(h + 2)}:00-${hh(h + 3)}:00`]);
  const read = await e.read(todo.id);
  const after = hourStart(Date.now());
  assert.equal(read.waiting?.reason, 'presence_out');
  const until = read.waiting?.reason === 'presence_out' ? read.waiting.until : null;
  assert.ok(
    [before, after].map((t) => new Date(t + 2 * 3_600_000).toISOString()).includes(until ?? ''),
    `next shift start, got ${until}`,
  );

  await pool.query(
    `UPDATE endpoints SET shift = NULL, presence_override = 'out', override_until = NULL WHERE id = $1`,
    [e.endpoint.id],
  );
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'presence_out', until: null });
});

test('a paused budget makes the queue’s todos wait as deferred with the budget’s status', async () => {
  const e = await endpointWith();
  const todo = await e.push();
  await setPolicy({ db: pool }, { humanId: e.endpoint.human_id, endpointId: null }, e.endpoint.id, 'inbox', {
    max_in_flight: 0,
  });
  assert.deepEqual((await e.read(todo.id)).waiting, {
    reason: 'deferred',
    until: null,
    exact: false,
    budget: 'paused',
    usage: {
      max_in_flight: 0,
      in_flight: 0,
      max_claims_per_window: null,
      used: 0,
      remaining: null,
      window_resets_at: null,
    },
  });
});

test('an exhausted window says when the budget reopens and how much was used', async () => {
  const e = await endpointWith();
  await e.push();
  const second = await e.push();
  await setPolicy({ db: pool }, { humanId: e.endpoint.human_id, endpointId: null }, e.endpoint.id, 'inbox', {
    max_claims_per_window: 1,
    window: { period: 'day', tz: 'UTC', start: '00:00' },
  });
  await claimNext(deps, agentOf(e.endpoint, `s-${e.endpoint.id}`), {});
  const w = (await e.read(second.id)).waiting;
  assert.equal(w?.reason, 'deferred');
  if (w?.reason !== 'deferred') return;
  const midnight = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
  assert.equal(w.budget, 'window_exhausted');
  assert.equal(w.until, midnight);
  assert.equal(w.exact, true);
  assert.equal(w.usage?.used, 1);
  assert.equal(w.usage?.remaining, 0);
});

test('without a live session the endpoint’s ready todos wait as no_consumer; a closed session counts for nothing', async () => {
  const e = await endpointWith({ session: false });
  const todo = await e.push();
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'no_consumer' });
  await insertSession(pool, {
    endpointId: e.endpoint.id,
    id: 's-late',
    clientName: null,
    clientVersion: null,
    instance: 'i',
  });
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'queued', ahead: 0 });
  await pool.query(`UPDATE mcp_sessions SET closed_at = now() WHERE endpoint_id = $1`, [e.endpoint.id]);
  assert.deepEqual((await e.read(todo.id)).waiting, { reason: 'no_consumer' });
});

test('precedence: scheduled beats presence, presence beats a budget, a budget beats a missing consumer', async () => {
  const e = await endpointWith({ session: false });
  const scheduled = await e.push();
  const ready = await e.push();
  await keys(pool, scheduled.id, 0, null);
  await pool.query(`UPDATE todos SET not_before = now() + interval '1 hour' WHERE id = $1`, [scheduled.id]);
  await setPolicy({ db: pool }, { humanId: e.endpoint.human_id, endpointId: null }, e.endpoint.id, 'inbox', {
    max_in_flight: 0,
  });
  await pool.query(`UPDATE endpoints SET presence_override = 'out' WHERE id = $1`, [e.endpoint.id]);
  const reasons = async () => [(await e.read(scheduled.id)).waiting?.reason, (await e.read(ready.id)).waiting?.reason];
  assert.deepEqual(await reasons(), ['scheduled', 'presence_out']);
  await pool.query(`UPDATE endpoints SET presence_override = NULL WHERE id = $1`, [e.endpoint.id]);
  assert.deepEqual(await reasons(), ['scheduled', 'deferred']);
  await pool.query(`DELETE FROM admission_policies WHERE endpoint_id = $1`, [e.endpoint.id]);
  assert.deepEqual(await reasons(), ['scheduled', 'no_consumer']);
});

test('ahead counts the claimable todos before it in claim order: higher priority first, then older ready_at; ties are not ahead', async () => {
  const e = await endpointWith({ queues: ['inbox', 'other'] });
  const t = await Promise.all(Array.from({ length: 6 }, (_, i) => e.push('inbox', `t${i}`)));
  const [urgent, old, tieA, tieB, young, low] = t as [ReadTodo, ReadTodo, ReadTodo, ReadTodo, ReadTodo, ReadTodo];
  await keys(pool, urgent.id, 5, -1);
  await keys(pool, old.id, 0, -50);
  await pool.query(`UPDATE todos SET priority = 0, ready_at = now() - interval '30 seconds' WHERE id = ANY($1)`, [
    [tieA.id, tieB.id],
  ]);
  await keys(pool, young.id, 0, -10);
  await keys(pool, low.id, -3, -100);
  // Not ahead of anything: another queue, a live claim, a scheduled todo.
  const elsewhere = await e.push('other');
  await keys(pool, elsewhere.id, 9, -500);
  const held = await e.push();
  await pool.query(
    `UPDATE todos SET state = 'claimed', priority = 9, attempt = 1, owner_session_id = 'x',
       lease_expires_at = now() + interval '5 minutes', ready_at = now() + interval '5 minutes' WHERE id = $1`,
    [held.id],
  );
  const later = await e.push();
  await keys(pool, later.id, 9, null);

  const page = await listTodos(deps, { endpointId: e.endpoint.id }, { queue: 'inbox', state: 'pending' });
  const ahead = Object.fromEntries(
    page.todos.map((x) => [x.title, x.waiting?.reason === 'queued' ? x.waiting.ahead : x.waiting?.reason]),
  );
  assert.deepEqual(ahead, { t0: 0, t1: 1, t2: 2, t3: 2, t4: 4, t5: 5, work: 'scheduled' });
});

test('a lapsed claim and a due retry wait behind pending work, in the order claim_next takes them', async () => {
  const e = await endpointWith();
  const pending = await e.push();
  const lapsed = await e.push();
  const retry = await e.push();
  await keys(pool, pending.id, 0, -1);
  await pool.query(
    `UPDATE todos SET state = 'claimed', attempt = 1, owner_session_id = 'x', lease_expires_at = now() - interval '1 minute',
       ready_at = now() - interval '1 minute' WHERE id = $1`,
    [lapsed.id],
  );
  await pool.query(
    `UPDATE todos SET state = 'failed', attempt = 1, next_retry_at = now() - interval '10 seconds',
       ready_at = now() - interval '10 seconds' WHERE id = $1`,
    [retry.id],
  );
  // Claim rank (docs/design/todos.md): pending work first, then lapsed claims and due
  // retries by age; the lapsed claim's lease ran out before the retry came due.
  assert.deepEqual((await e.read(pending.id)).waiting, { reason: 'queued', ahead: 0 });
  assert.deepEqual((await e.read(retry.id)).waiting, { reason: 'queued', ahead: 2 });
  const agent = agentOf(e.endpoint, `s-${e.endpoint.id}`);
  const order: string[] = [];
  for (let i = 0; i < 3; i++) {
    const claimed = await claimNext(deps, agent, {});
    assert.ok('todo' in claimed && claimed.todo, `claim ${i + 1}`);
    order.push(claimed.todo.id);
  }
  assert.deepEqual(order, [pending.id, lapsed.id, retry.id]);
});

test('past 1,000 todos ahead the count stops and answers "1000+"; the head of the same queue still reads 0', async () => {
  const e = await endpointWith();
  const last = await e.push();
  await keys(pool, last.id, 0, 0);
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, body, max_attempts, ready_at, priority)
     SELECT $1, 'td_bulk' || lpad(g::text, 6, '0'), 'inbox', 'bulk', '', 5, now() - make_interval(secs => g), g % 3
       FROM generate_series(1, 1500) g`,
    [e.endpoint.id],
  );
  assert.deepEqual((await e.read(last.id)).waiting, { reason: 'queued', ahead: '1000+' });
  assert.deepEqual((await e.read('td_bulk001499')).waiting, { reason: 'queued', ahead: 0 });
  // 500 todos have priority 2; the oldest priority-1 todo has exactly those ahead.
  assert.deepEqual((await e.read('td_bulk001498')).waiting, { reason: 'queued', ahead: 500 });
});

test('the count ahead of an urgent todo reads the few entries above it, not the long queue below it', async () => {
  const e = await endpointWith();
  const urgent = await e.push();
  await keys(pool, urgent.id, 50, 0);
  // 30,000 ready todos of priority 0, and 10 older ones of priority 50 ahead of it.
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, body, max_attempts, ready_at, priority)
     SELECT $1, 'td_long' || lpad(g::text, 6, '0'), 'inbox', 'long', '', 5, now() - make_interval(secs => g),
            CASE WHEN g <= 10 THEN 50 ELSE 0 END
       FROM generate_series(1, 30000) g`,
    [e.endpoint.id],
  );
  await pool.query('ANALYZE todos');
  const seen: { text: string; values: unknown[] }[] = [];
  const spy: Queryable = {
    query: ((q: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
      if (typeof q === 'string') seen.push({ text: q, values: values ?? [] });
      else seen.push({ text: q.text, values: q.values ?? values ?? [] });
      return pool.query(q as string, values);
    }) as Queryable['query'],
  };
  assert.deepEqual(
    (await getTodo({ ...deps, db: spy }, { endpointId: e.endpoint.id }, { id: urgent.id })).todo.waiting,
    {
      reason: 'queued',
      ahead: 10,
    },
  );
  const counting = seen.find((q) => q.text.includes('AS ahead'));
  assert.ok(counting, 'the ahead count was read');
  const plan = await pool.query<{ 'QUERY PLAN': [{ Plan: unknown }] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${counting.text}`,
    counting.values,
  );
  const buffers = (node: unknown): number => {
    const n = node as { 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number };
    return (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);
  };
  const total = buffers(plan.rows[0]?.['QUERY PLAN'][0].Plan);
  assert.ok(total < 200, `the ahead count read ${total} buffers (30,000 todos behind it must not be walked)`);
});

test('claimed, done, canceled and dead-lettered todos carry no waiting; synthetic ones neither', async () => {
  const e = await endpointWith();
  const states = [
    `state = 'claimed', attempt = 1, owner_session_id = 'x', lease_expires_at = now() + interval '5 minutes'`,
    `state = 'done', ready_at = NULL, completed_at = now()`,
    `state = 'canceled', ready_at = NULL`,
    `state = 'failed', attempt = 5, next_retry_at = NULL, ready_at = NULL`,
    `synthetic = true`,
  ];
  for (const set of states) {
    const todo = await e.push();
    await pool.query(`UPDATE todos SET ${set} WHERE id = $1`, [todo.id]);
    const read = await e.read(todo.id);
    assert.equal('waiting' in read, false, set);
  }
});

test('a list read costs three statements for its waiting, whatever the number of todos', async () => {
  const e = await endpointWith();
  for (let i = 0; i < 30; i++) await e.push();
  const count = async (limit: number) => {
    let statements = 0;
    const counting: Queryable = {
      query: ((...args: Parameters<Pool['query']>) => {
        statements += 1;
        return (pool.query as (...a: unknown[]) => unknown)(...args);
      }) as Pool['query'],
    };
    const page = await listTodos({ ...deps, db: counting }, { endpointId: e.endpoint.id }, { limit });
    assert.ok(page.todos.every((t) => t.waiting?.reason === 'queued'));
    return statements;
  };
  const one = await count(1);
  assert.equal(one, 4, 'the page, the budgets, the endpoint facts, the keys with their counts');
  assert.equal(await count(30), one);
});
