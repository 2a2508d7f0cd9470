// Pins coalesced claim_next (docs/design/coalescing.md, "Claims") with real races: calls
// queued behind a running claim statement are served by one statement that deals each
// caller its own todo in claim order, with its own attempt and lease token, acknowledges
// rings as single claims would, and fails every caller — claiming nothing — when its
// connection dies mid-statement.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.js';
import { Metrics } from '../../src/metrics/index.js';
import { claimNext as claimNextRow, type ClaimRow, type ClaimedTodo } from '../../src/store/claims.js';
import { claimNextMany } from '../../src/store/claims-batch.js';
import { coalescing } from '../../src/todos/coalesce.js';
import { claimNext, complete, type TodoDeps } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, makeEndpoint } from '../helpers/fixtures.js';

const { pool, url } = await testDatabase('coalesce_claims', 4);

async function seed(endpointId: string, count: number, priority: (g: number) => number = () => 0, queue = 'inbox') {
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, priority, ready_at)
     SELECT $1, 'td_' || $4 || lpad(g::text, 20, '0'), $5, 'seeded ' || g, ($3::int[])[g], now() - interval '1 minute'
       FROM generate_series(1, $2) g`,
    [endpointId, count, Array.from({ length: count }, (_, i) => priority(i + 1)), queue.slice(0, 4), queue],
  );
}

/** A claim statement's claimed row (not a policy). */
function todoOf(r: ClaimRow | undefined): ClaimedTodo | undefined {
  return r && r.id !== null ? r : undefined;
}

/** How many calls each claim statement served, as the coalescing metric saw them. */
async function statementSizes(metrics: Metrics): Promise<{ statements: number; calls: number }> {
  const m = await metrics.coalescedCalls.get();
  const of = (suffix: string) =>
    m.values
      .filter((v) => v.metricName === `switchboard_coalesced_calls${suffix}` && v.labels.statement === 'claim_next')
      .reduce((n, v) => n + v.value, 0);
  return { statements: of('_count'), calls: of('_sum') };
}

/** `n` sessions racing one claim_next each through the use case, with coalescing on. */
async function race(n: number, todos: number) {
  const endpoint = await makeEndpoint(pool);
  await seed(endpoint.id, todos);
  const racers = createPool({ url, max: 8 });
  const metrics = new Metrics({ defaults: false });
  const deps: TodoDeps = {
    db: racers,
    defaultLeaseSeconds: 300,
    coalesce: coalescing(racers, { maxBatch: 32, metrics }),
  };
  try {
    const clients = await Promise.all(Array.from({ length: 8 }, () => racers.connect()));
    clients.forEach((c) => c.release());
    const wait = barrier(n);
    const agents = Array.from({ length: n }, (_, i) => agentOf(endpoint, `s${i}`));
    const results = await Promise.all(
      agents.map(async (agent) => {
        await wait();
        return claimNext(deps, agent, {});
      }),
    );
    const sizes = await statementSizes(metrics);
    assert.equal(sizes.calls, n, 'every claim ran in a claim statement of the lane');
    assert.ok(sizes.statements < n, `batches formed: ${n} calls in ${sizes.statements} statements`);
    const claimed = results.flatMap((r, i) => ('todo' in r ? [{ r, agent: agents[i]! }] : []));
    const ids = claimed.map((c) => c.r.todo.id);
    assert.equal(new Set(ids).size, ids.length, 'no todo claimed twice');
    assert.equal(ids.length, Math.min(n, todos), 'every caller got a todo while there were todos');
    for (const { r, agent } of claimed) assert.equal(r.todo.owner_session_id, agent.sessionId, 'its own todo');
    const open = await pool.query<{ todo_id: string; session_id: string; n: number }>(
      `SELECT todo_id, min(session_id) AS session_id, count(*)::int AS n FROM todo_attempts
        WHERE endpoint_id = $1 AND ended_at IS NULL GROUP BY todo_id`,
      [endpoint.id],
    );
    assert.equal(open.rowCount, ids.length, 'one open attempt per claimed todo');
    const bySession = new Map(claimed.map((c) => [c.r.todo.id, c.agent.sessionId]));
    for (const row of open.rows) {
      assert.equal(row.n, 1);
      assert.equal(row.session_id, bySession.get(row.todo_id), 'the attempt is its caller’s');
    }
    const tokens = claimed.map((c) => c.r.lease_token);
    assert.ok(tokens.every((t) => typeof t === 'string' && t.startsWith('lt_')));
    assert.equal(new Set(tokens).size, tokens.length, 'lease tokens distinct');
    // Each token is its own claim's: another's fails, its own completes (from any session).
    if (claimed.length >= 2) {
      const [a, b] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
      await assert.rejects(complete(deps, a.agent, { id: a.r.todo.id, lease_token: b.r.lease_token }));
    }
    await Promise.all(
      claimed.map((c) =>
        complete(deps, agentOf(endpoint, 'other'), { id: c.r.todo.id, lease_token: c.r.lease_token, result: {} }),
      ),
    );
    const done = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND state = 'done'`,
      [endpoint.id],
    );
    assert.equal(done.rows[0]?.n, ids.length);
    return results;
  } finally {
    await racers.end();
  }
}

test('32 sessions racing coalesced claim_next over 20 todos: 20 claimed once each, 12 answered empty', async () => {
  const results = await race(32, 20);
  assert.equal(results.filter((r) => 'empty' in r).length, 12);
});

test('32 sessions racing coalesced claim_next over 50 todos: each gets its own todo', async () => {
  const results = await race(32, 50);
  assert.ok(results.every((r) => 'todo' in r));
});

test('a batch takes the top N in claim order, the first caller the best', async () => {
  const endpoint = await makeEndpoint(pool);
  // Priorities 1..10 shuffled; the batch of 4 takes 10, 9, 8, 7 in caller order.
  const prio = [3, 10, 1, 7, 5, 9, 2, 8, 6, 4];
  await seed(endpoint.id, prio.length, (g) => prio[g - 1] ?? 0);
  const out = await claimNextMany(
    pool,
    endpoint.id,
    ['inbox'],
    ['a', 'b', 'c', 'd'].map((sessionId) => ({ sessionId, leaseSeconds: 60 })),
  );
  assert.deepEqual(
    out.map((rows) => rows.map((r) => [todoOf(r)?.priority, todoOf(r)?.owner_session_id])),
    [[[10, 'a']], [[9, 'b']], [[8, 'c']], [[7, 'd']]],
  );
  // Each caller's own lease seconds.
  const leases = await claimNextMany(
    pool,
    endpoint.id,
    ['inbox'],
    [
      { sessionId: 'e', leaseSeconds: 30 },
      { sessionId: 'f', leaseSeconds: 600 },
    ],
  );
  const span = (rows: ClaimRow[]) => {
    const r = rows[0] as { lease_expires_at: Date; claimed_at: Date };
    return (r.lease_expires_at.getTime() - r.claimed_at.getTime()) / 1000;
  };
  assert.deepEqual(leases.map(span), [30, 600]);
});

test('a lapsed claim taken over by a batch closes its attempt, and each caller’s cap prunes its todo’s attempts', async () => {
  const endpoint = await makeEndpoint(pool);
  await seed(endpoint.id, 2);
  await pool.query(`UPDATE todos SET max_attempts = 5 WHERE endpoint_id = $1`, [endpoint.id]);
  const pair = (x: string, y: string, keep?: [number, number]) =>
    claimNextMany(
      pool,
      endpoint.id,
      ['inbox'],
      [
        { sessionId: x, leaseSeconds: 60, keepAttempts: keep?.[0] },
        { sessionId: y, leaseSeconds: 60, keepAttempts: keep?.[1] },
      ],
    );
  const first = await pair('x', 'y');
  assert.ok(first.every((rows) => rows.length === 1));
  await pool.query(
    `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second'
      WHERE endpoint_id = $1`,
    [endpoint.id],
  );
  await pool.query(`UPDATE todo_attempts SET lease_expires_at = now() - interval '1 second' WHERE endpoint_id = $1`, [
    endpoint.id,
  ]);
  const again = await pair('z', 'w');
  assert.deepEqual(
    again.map((rows) => todoOf(rows[0])).map((t) => [Number(t?.taken_over), t?.attempt, t?.prior_attempts.length]),
    [
      [1, 2, 1],
      [1, 2, 1],
    ],
  );
  // Both released by hand, then claimed again with caps of 1 and 5.
  await pool.query(
    `UPDATE todo_attempts SET ended_at = now(), outcome = 'released' WHERE endpoint_id = $1 AND ended_at IS NULL`,
    [endpoint.id],
  );
  await pool.query(
    `UPDATE todos SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL, ready_at = now()
      WHERE endpoint_id = $1`,
    [endpoint.id],
  );
  const third = await pair('p', 'q', [1, 5]);
  const kept = await pool.query<{ todo_id: string; n: number; open: number }>(
    `SELECT a.todo_id, count(*)::int AS n, count(*) FILTER (WHERE a.ended_at IS NULL)::int AS open
       FROM todo_attempts a WHERE a.endpoint_id = $1 GROUP BY a.todo_id`,
    [endpoint.id],
  );
  const byTodo = new Map(kept.rows.map((r) => [r.todo_id, [r.n, r.open]]));
  assert.deepEqual(
    third.map((rows) => byTodo.get(rows[0]?.id as string)),
    [
      [1, 1],
      [3, 1],
    ],
  );
});

/** A world with rung todos and open digest rings; how N claims left it. */
async function ringWorld(claim: (endpointId: string, sessions: string[]) => Promise<ClaimRow[][]>) {
  const endpoint = await makeEndpoint(pool);
  await seed(endpoint.id, 5);
  const todos = await pool.query<{ id: string }>(`SELECT id FROM todos WHERE endpoint_id = $1 ORDER BY id`, [
    endpoint.id,
  ]);
  const ring = (id: string, session: string, todo: string | null, kind: string) =>
    pool.query(
      `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at)
       VALUES ($1, $2, $3, $4, $5, 'inbox', now() - interval '10 seconds')`,
      [endpoint.id, id, session, todo, kind],
    );
  // The first and third todos rung (the third twice), two open digests, one acknowledged.
  await ring('rg_1', 'listener', todos.rows[0]!.id, 'todo');
  await ring('rg_2', 'listener', todos.rows[2]!.id, 'todo');
  await ring('rg_3', 'other', todos.rows[2]!.id, 'todo');
  await ring('rg_4', 'listener', null, 'digest');
  await ring('rg_5', 'other', null, 'digest');
  await ring('rg_6', 'listener', null, 'digest');
  await pool.query(
    `UPDATE doorbell_rings SET acked_at = now(), ack_via = 'ack', acked_session_id = 'listener'
      WHERE endpoint_id = $1 AND id = 'rg_6'`,
    [endpoint.id],
  );
  await pool.query(`UPDATE mcp_sessions SET unheard = true WHERE endpoint_id = $1`, [endpoint.id]);
  const answers = await claim(endpoint.id, ['a', 'b', 'c', 'd']);
  const rings = await pool.query<{ id: string; ack_via: string | null; acked_session_id: string | null }>(
    `SELECT id, ack_via, acked_session_id FROM doorbell_rings WHERE endpoint_id = $1 ORDER BY id`,
    [endpoint.id],
  );
  return {
    answers: answers.map((rows) =>
      rows.map((r) => ({
        todo: (r.id ?? '').replace(endpoint.id, ''),
        session: todoOf(r)?.owner_session_id,
        rings: (todoOf(r)?.rings ?? []).map((g) => `${g.kind}:${String(g.in_window)}`).sort(),
      })),
    ),
    rings: rings.rows,
  };
}

test('a batch acknowledges rings exactly as the same claims one by one: digests go to the first caller', async () => {
  const single = await ringWorld(async (endpointId, sessions) => {
    const out: ClaimRow[][] = [];
    for (const sessionId of sessions) {
      out.push(await claimNextRow(pool, { endpointId, queues: ['inbox'], sessionId, leaseSeconds: 60 }));
    }
    return out;
  });
  const batched = await ringWorld((endpointId, sessions) =>
    claimNextMany(
      pool,
      endpointId,
      ['inbox'],
      sessions.map((sessionId) => ({ sessionId, leaseSeconds: 60 })),
    ),
  );
  assert.deepEqual(batched, single);
  // And what that is: a's claim took its todo's ring and both open digests; c's its two rings.
  assert.deepEqual(
    single.answers.map((rows) => rows[0]?.rings),
    [['digest:true', 'digest:true', 'todo:true'], [], ['todo:true', 'todo:true'], []],
  );
  assert.deepEqual(
    single.rings.map((r) => r.acked_session_id),
    ['a', 'c', 'c', 'a', 'a', 'listener'],
  );
});

test('with a policy on a requested queue every caller of the batch gets the policies, and nothing is claimed', async () => {
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'held'] });
  await seed(endpoint.id, 3);
  await pool.query(
    `INSERT INTO admission_policies (endpoint_id, queue, max_in_flight, created_by_human_id, updated_by_human_id)
     VALUES ($1, 'held', 1, $2, $2)`,
    [endpoint.id, endpoint.human_id],
  );
  const out = await claimNextMany(
    pool,
    endpoint.id,
    ['inbox', 'held'],
    [
      { sessionId: 'a', leaseSeconds: 60 },
      { sessionId: 'b', leaseSeconds: 60 },
      { sessionId: 'c', leaseSeconds: 60 },
    ],
  );
  assert.equal(out.length, 3);
  for (const rows of out) {
    assert.deepEqual(
      rows.map((r) => [r.id, (r.admission as { queue: string }).queue]),
      [[null, 'held']],
    );
  }
  const claimed = await pool.query(`SELECT 1 FROM todos WHERE endpoint_id = $1 AND state = 'claimed'`, [endpoint.id]);
  assert.equal(claimed.rowCount, 0);
});

/** Waits until a backend runs a statement matching `like`, waiting for a lock; its pid. */
async function blockedBackend(like: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const res = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [like],
    );
    if (res.rows[0]) return res.rows[0].pid;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no backend blocked on ${like}`);
}

test('a batch whose connection is killed mid-statement fails every caller and claims nothing half-way', async () => {
  const endpoint = await makeEndpoint(pool);
  await seed(endpoint.id, 6);
  await pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at)
     VALUES ($1, 'rg_digest', 'listener', NULL, 'digest', 'inbox', now() - interval '1 second')`,
    [endpoint.id],
  );
  const racers: Pool = createPool({ url, max: 4 });
  const metrics = new Metrics({ defaults: false });
  const lanes = coalescing(racers, { maxBatch: 32, metrics });
  assert.ok(lanes);
  // Every claim statement acknowledges the open digest, so each waits on this lock after
  // it has claimed its rows and opened their attempts.
  const holder = await pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM doorbell_rings WHERE endpoint_id = $1 FOR UPDATE`, [endpoint.id]);
    const args = (sessionId: string) => ({ endpointId: endpoint.id, queues: ['inbox'], sessionId, leaseSeconds: 60 });
    const alone = lanes.claimNext(args('alone'));
    const aloneFailed = assert.rejects(alone);
    const first = await blockedBackend('%claim%');
    // Queued behind the running statement: the next one serves them together.
    const batch = ['b1', 'b2', 'b3', 'b4'].map((s) => lanes.claimNext(args(s)));
    const settled = Promise.allSettled(batch);
    await pool.query('SELECT pg_terminate_backend($1)', [first]);
    await aloneFailed;
    let second = await blockedBackend('%claim%');
    for (let i = 0; second === first && i < 100; i++) second = await blockedBackend('%claim%');
    assert.notEqual(second, first);
    const midway = await pool.query<{ claimed: number }>(
      `SELECT count(*)::int AS claimed FROM todos WHERE endpoint_id = $1 AND state = 'claimed'`,
      [endpoint.id],
    );
    assert.equal(midway.rows[0]?.claimed, 0, 'nothing committed while the batch waits');
    await pool.query('SELECT pg_terminate_backend($1)', [second]);
    const outcomes = await settled;
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected', 'rejected'],
    );
    assert.deepEqual(await statementSizes(metrics), { statements: 2, calls: 5 });
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  const after = await pool.query<{ state: string; n: number }>(
    `SELECT state, count(*)::int AS n FROM todos WHERE endpoint_id = $1 GROUP BY state`,
    [endpoint.id],
  );
  assert.deepEqual(after.rows, [{ state: 'pending', n: 6 }]);
  const attempts = await pool.query(`SELECT 1 FROM todo_attempts WHERE endpoint_id = $1`, [endpoint.id]);
  assert.equal(attempts.rowCount, 0, 'no attempt row left behind');
  // A retry claims them.
  try {
    const retry = await Promise.all(
      ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((sessionId) =>
        lanes.claimNext({ endpointId: endpoint.id, queues: ['inbox'], sessionId, leaseSeconds: 60 }),
      ),
    );
    assert.equal(new Set(retry.map((rows) => rows[0]?.id)).size, 6);
  } finally {
    await racers.end();
  }
});
