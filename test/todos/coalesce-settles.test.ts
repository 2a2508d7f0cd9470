// Pins the coalesced settles (docs/design/coalescing.md, "Settles") under real races:
// complete, fail, heartbeat and release calls released together by a barrier share batch
// statements (the switchboard_coalesced_calls histogram proves batches formed), every
// call gets its own row's answer, and the outcomes are today's: takeovers, reaps and
// duplicate calls classify as they do for single statements, a bad input fails only its
// own caller, and a batch whose connection dies fails its callers and writes nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { CHANNEL } from '../../src/db/bus.js';
import { AppError } from '../../src/domain/errors.js';
import { Metrics } from '../../src/metrics/index.js';
import { reapExpired } from '../../src/store/todo-sweeps.js';
import { coalescing, type Coalescing } from '../../src/todos/coalesce.js';
import {
  claim,
  claimNext,
  complete,
  createTodo,
  fail,
  heartbeat,
  release,
  type Agent,
  type TodoDeps,
} from '../../src/todos/index.js';
import type { Endpoint } from '../../src/store/endpoints.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, makeEndpoint } from '../helpers/fixtures.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('coalesce_settles', 12);

// How each named statement ended, so a test can tell a batch that committed from one that
// failed and fell back to single statements (both answer every caller).
const ran = new Map<string, { ok: number; failed: number }>();
const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
(pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
  const name = (args[0] as { name?: string } | null)?.name;
  const answer = query(...args);
  if (name === undefined) return answer;
  const tally = ran.get(name) ?? { ok: 0, failed: 0 };
  ran.set(name, tally);
  return answer.then(
    (res) => ((tally.ok += 1), res),
    (err: unknown) => {
      tally.failed += 1;
      throw err;
    },
  );
};
/** How `name` ended since the last call, and resets its count. */
function taken(name: string): { ok: number; failed: number } {
  const tally = ran.get(name) ?? { ok: 0, failed: 0 };
  ran.delete(name);
  return tally;
}

interface Rig {
  deps: TodoDeps;
  lanes: Coalescing;
  metrics: Metrics;
  /** (endpoint, session) pairs the use cases told `settled`, in the order told. */
  settled: string[];
}

/** Deps whose settles coalesce (at most 32 calls a statement), with their own metrics. */
function rig(): Rig {
  const metrics = new Metrics();
  const lanes = coalescing(pool, { maxBatch: 32, metrics });
  assert.ok(lanes);
  const settled: string[] = [];
  const deps: TodoDeps = {
    db: pool,
    defaultLeaseSeconds: 300,
    coalesce: lanes,
    settled: (endpointId, sessionId) => settled.push(`${endpointId}/${sessionId}`),
  };
  return { deps, lanes, metrics, settled };
}

/** Calls the `statement` lane served and statements it ran, from switchboard_coalesced_calls. */
async function served(metrics: Metrics, statement: string): Promise<{ calls: number; statements: number }> {
  const { values } = await metrics.coalescedCalls.get();
  const of = (name: string) =>
    values.find((v) => v.metricName === name && v.labels.statement === statement)?.value ?? 0;
  return { calls: of('switchboard_coalesced_calls_sum'), statements: of('switchboard_coalesced_calls_count') };
}

/** Asserts that `statement` served `calls` calls in fewer statements: some batch carried more than one. */
async function assertCoalesced(metrics: Metrics, statement: string, calls: number): Promise<void> {
  const s = await served(metrics, statement);
  assert.equal(s.calls, calls, `${statement}: calls served`);
  assert.ok(s.statements < calls, `${statement}: ${calls} calls in ${s.statements} statements (a batch formed)`);
  const batches = taken(`${statement}_many`);
  assert.ok(batches.ok >= 1, `${statement}: a batch statement committed`);
  assert.equal(batches.failed, 0, `${statement}: no batch fell back to single statements`);
}

/** `perEndpoint` todos on each of `endpoints` fresh endpoints, and one session per todo. */
async function fleet(
  endpoints: number,
  perEndpoint: number,
  todo: Record<string, unknown> = {},
): Promise<{ eps: Endpoint[]; agents: Agent[] }> {
  const eps: Endpoint[] = [];
  const agents: Agent[] = [];
  for (let e = 0; e < endpoints; e++) {
    const ep = await makeEndpoint(pool);
    eps.push(ep);
    for (let i = 0; i < perEndpoint; i++) {
      await createTodo(
        { db: pool, defaultLeaseSeconds: 300 },
        { endpointId: ep.id },
        { humanId: ep.human_id },
        { queue: 'inbox', title: `t${e}.${i}`, ...todo },
      );
      agents.push(agentOf(ep, `s${e}-${i}`));
    }
  }
  return { eps, agents };
}

/** Every agent claims at once (a barrier), each a distinct todo; returns the ids in agent order. */
async function claimAll(deps: TodoDeps, agents: Agent[], input: Record<string, unknown> = {}): Promise<string[]> {
  const wait = barrier(agents.length);
  const ids = await Promise.all(
    agents.map(async (agent) => {
      await wait();
      const r = await claimNext(deps, agent, input);
      assert.ok('todo' in r, `${agent.sessionId} claimed`);
      return r.todo.id;
    }),
  );
  assert.equal(new Set(ids).size, agents.length, 'distinct claims');
  return ids;
}

/** Runs `call` for every agent at once (a barrier). */
async function together<T>(agents: Agent[], call: (agent: Agent, i: number) => Promise<T>): Promise<T[]> {
  const wait = barrier(agents.length);
  return Promise.all(
    agents.map(async (agent, i) => {
      await wait();
      return call(agent, i);
    }),
  );
}

async function rowsOf(ids: string[]) {
  const res = await pool.query<{
    id: string;
    state: string;
    owner_session_id: string | null;
    attempt: number;
    result: unknown;
    error: string | null;
    lease_expires_at: Date | null;
    next_retry_at: Date | null;
    ready_at: Date | null;
    updated_at: Date;
  }>(`SELECT t.* FROM todos t WHERE id = ANY($1::text[])`, [ids]);
  return new Map(res.rows.map((r) => [r.id, r]));
}

async function attemptsOf(ids: string[]) {
  const res = await pool.query<{
    todo_id: string;
    seq: number;
    session_id: string;
    outcome: string | null;
    ended: boolean;
    summary: string | null;
    lease_expires_at: Date | null;
  }>(
    `SELECT todo_id, seq, session_id, outcome, ended_at IS NOT NULL AS ended, summary, lease_expires_at
       FROM todo_attempts WHERE todo_id = ANY($1::text[]) ORDER BY todo_id, seq`,
    [ids],
  );
  return res.rows;
}

async function lapse(ids: string[]): Promise<void> {
  await pool.query(
    `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second'
      WHERE id = ANY($1::text[])`,
    [ids],
  );
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string } | null> {
  try {
    await promise;
    return null;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    return { code: err.code, message: err.message };
  }
}

test('32 sessions of four endpoints claim and complete at once: coalesced, each done once, each caller its own row', async () => {
  const r = rig();
  const { agents } = await fleet(4, 8);
  const ids = await claimAll(r.deps, agents);
  const done = await together(agents, (agent, i) =>
    complete(r.deps, agent, { id: ids[i], result: { by: agent.sessionId }, summary: `did ${i}` }),
  );
  await assertCoalesced(r.metrics, 'complete', 32);
  done.forEach((d, i) => {
    assert.equal(d.todo.id, ids[i], 'each caller is answered with its own todo');
    assert.equal(d.todo.endpoint_id, agents[i]!.endpointId);
    assert.equal(d.todo.state, 'done');
    assert.ok(!('ord' in d.todo) && !('claimer' in d.todo), 'no batch columns leak');
  });
  // The doorbell hears of each claimer's own session, per row.
  assert.deepEqual(r.settled.sort(), agents.map((a) => `${a.endpointId}/${a.sessionId}`).sort());
  const rows = await rowsOf(ids);
  ids.forEach((id, i) => {
    assert.equal(rows.get(id)?.state, 'done');
    assert.deepEqual(rows.get(id)?.result, { by: agents[i]!.sessionId });
  });
  const attempts = await attemptsOf(ids);
  assert.equal(attempts.length, 32);
  for (const a of attempts) {
    const i = ids.indexOf(a.todo_id);
    assert.deepEqual(
      { outcome: a.outcome, ended: a.ended, session: a.session_id, summary: a.summary },
      { outcome: 'completed', ended: true, session: agents[i]!.sessionId, summary: `did ${i}` },
    );
  }
});

test('32 fails at once: coalesced, retries scheduled as today with a jitter drawn per todo, retry false dead-letters', async () => {
  const r = rig();
  const { agents } = await fleet(2, 16);
  const ids = await claimAll(r.deps, agents);
  const failed = await together(agents, (agent, i) =>
    fail(r.deps, agent, { id: ids[i], error: `boom ${i}`, summary: `tried ${i}`, retry: i % 4 !== 0 }),
  );
  await assertCoalesced(r.metrics, 'fail', 32);
  failed.forEach((f, i) => assert.equal(f.todo.id, ids[i]));
  const rows = await rowsOf(ids);
  const delays: number[] = [];
  ids.forEach((id, i) => {
    const row = rows.get(id)!;
    assert.equal(row.state, 'failed');
    assert.equal(row.error, `boom ${i}`);
    if (i % 4 === 0) {
      assert.equal(row.next_retry_at, null, 'retry false: dead-lettered now');
      assert.equal(row.ready_at, null);
      return;
    }
    // First attempt failed: the default backoff's base (30 s), jittered ±20 %.
    assert.equal(row.ready_at?.getTime(), row.next_retry_at?.getTime());
    const delay = (row.next_retry_at!.getTime() - row.updated_at.getTime()) / 1000;
    assert.ok(delay >= 24 && delay <= 36, `retry in ${delay} s`);
    delays.push(row.next_retry_at!.getTime());
  });
  assert.ok(new Set(delays).size > 1, 'the jitter is drawn per todo, not once per batch');
  const attempts = await attemptsOf(ids);
  assert.ok(attempts.every((a) => a.outcome === 'failed' && a.ended));
  assert.deepEqual(attempts.map((a) => a.summary).sort(), ids.map((_, i) => `tried ${i}`).sort());
});

test('32 heartbeats at once: coalesced, each todo and its open attempt get the caller’s new lease', async () => {
  const r = rig();
  const { agents } = await fleet(2, 16);
  const ids = await claimAll(r.deps, agents, { lease_seconds: 60 });
  const beats = await together(agents, (agent, i) => heartbeat(r.deps, agent, { id: ids[i], lease_seconds: 600 + i }));
  await assertCoalesced(r.metrics, 'heartbeat', 32);
  const rows = await rowsOf(ids);
  const attempts = await attemptsOf(ids);
  beats.forEach((b, i) => {
    assert.equal(b.todo.id, ids[i]);
    const row = rows.get(ids[i]!)!;
    assert.equal(row.state, 'claimed');
    const lease = (row.lease_expires_at!.getTime() - row.updated_at.getTime()) / 1000;
    assert.equal(lease, 600 + i, `the lease of ${i}`);
    const open = attempts.filter((a) => a.todo_id === ids[i]);
    assert.equal(open.length, 1);
    assert.equal(open[0]!.ended, false);
    assert.equal(open[0]!.lease_expires_at?.getTime(), row.lease_expires_at?.getTime());
  });
});

test('32 releases at once: coalesced, each todo pending again with its attempt count, and todo_ready announced', async () => {
  const r = rig();
  const { eps, agents } = await fleet(4, 8);
  const ids = await claimAll(r.deps, agents);
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const ready = new Set<string>();
  listener.on('notification', (n) => {
    const event = JSON.parse(n.payload ?? '{}') as { type?: string; endpoint_id?: string };
    if (event.type === 'todo_ready' && event.endpoint_id) ready.add(event.endpoint_id);
  });
  await listener.query(`LISTEN ${CHANNEL}`);
  try {
    const released = await together(agents, (agent, i) =>
      release(r.deps, agent, { id: ids[i], summary: `put back ${i}` }),
    );
    await assertCoalesced(r.metrics, 'release', 32);
    released.forEach((x, i) => {
      assert.equal(x.todo.id, ids[i]);
      assert.ok(!('notified' in x.todo));
    });
    await until(() => eps.every((ep) => ready.has(ep.id)), 'todo_ready for every endpoint released on');
  } finally {
    await listener.end();
  }
  const rows = await rowsOf(ids);
  for (const id of ids) {
    const row = rows.get(id)!;
    assert.deepEqual([row.state, row.owner_session_id, row.attempt], ['pending', null, 1]);
  }
  const attempts = await attemptsOf(ids);
  assert.ok(attempts.every((a) => a.outcome === 'released' && a.ended));
});

test('a complete after its lease was taken over is refused as today, inside a batch of completes that commit', async () => {
  const r = rig();
  const { eps, agents } = await fleet(1, 8);
  const ids = await claimAll(r.deps, agents);
  // Todo 0 and 1 lapse and another session takes them over, one on the coalesced path
  // and one on the single statements (today's answer to compare with).
  await lapse([ids[0]!, ids[1]!]);
  const thief = agentOf(eps[0]!, 'thief');
  const plain: TodoDeps = { db: pool, defaultLeaseSeconds: 300 };
  await claim(plain, thief, { id: ids[0] });
  await claim(plain, thief, { id: ids[1] });
  const today = await refusal(complete(plain, agents[1]!, { id: ids[1] }));
  assert.equal(today?.code, 'conflict');
  const answers = await together(agents, (agent, i) =>
    i === 1 ? Promise.resolve(null) : refusal(complete(r.deps, agent, { id: ids[i] })),
  );
  await assertCoalesced(r.metrics, 'complete', 7);
  assert.deepEqual(answers[0], today, 'refused with the message a single statement gets');
  answers.slice(2).forEach((a) => assert.equal(a, null));
  const rows = await rowsOf(ids);
  assert.deepEqual([rows.get(ids[0]!)?.state, rows.get(ids[0]!)?.owner_session_id], ['claimed', 'thief']);
});

test('completes racing takeovers and the reaper: each todo has one outcome, and every refusal is today’s', async () => {
  const r = rig();
  const { eps, agents } = await fleet(1, 24);
  const ids = await claimAll(r.deps, agents);
  await lapse(ids);
  const thieves = agents.map((_, i) => agentOf(eps[0]!, `thief-${i}`));
  // Half race a takeover by id, half race the reaper; all start together.
  const racers = [...agents, ...thieves.slice(0, 12), agents[0]!];
  const results = await together(racers, async (_, k) => {
    if (k < 24) return { k, refused: await refusal(complete(r.deps, agents[k]!, { id: ids[k] })) };
    if (k < 36) return { k, refused: await refusal(claim(r.deps, thieves[k - 24]!, { id: ids[k - 24] })) };
    await reapExpired(pool, 1000);
    return { k, refused: null };
  });
  await assertCoalesced(r.metrics, 'complete', 24);
  const rows = await rowsOf(ids);
  const attempts = await attemptsOf(ids);
  for (let i = 0; i < 24; i++) {
    const refused = results[i]!.refused;
    const row = rows.get(ids[i]!)!;
    const first = attempts.find((a) => a.todo_id === ids[i] && a.seq === 1)!;
    if (refused === null) {
      assert.equal(row.state, 'done', `todo ${i} completed`);
      assert.equal(first.outcome, 'completed');
      if (i < 12) assert.equal(results[24 + i]!.refused?.code, 'conflict', `thief ${i} lost to the complete`);
      continue;
    }
    // Refused: the lapsed attempt was closed by a takeover or the reaper, and the message
    // says what the todo was when the refusal looked (a reaped todo may be claimed after).
    assert.equal(refused.code, 'conflict');
    assert.equal(first.outcome, 'lease_expired');
    const takenOver =
      'cannot complete: your lease lapsed and the todo is now claimed by another session (you lost it; do not continue its work)';
    const reaped =
      'cannot complete: your lease lapsed (the todo is now pending; you lost it; do not continue its work, or claim it again)';
    if (row.state === 'claimed') {
      assert.equal(row.owner_session_id, `thief-${i}`);
      assert.ok([takenOver, reaped].includes(refused.message), refused.message);
    } else {
      assert.equal(row.state, 'pending', `todo ${i} reaped`);
      assert.equal(refused.message, reaped);
    }
  }
});

test('two completes of one todo in one batch: one wins, the other is told as today', async () => {
  const r = rig();
  const { eps, agents } = await fleet(1, 3);
  const ids = await claimAll(r.deps, agents);
  const plain: TodoDeps = { db: pool, defaultLeaseSeconds: 300 };
  // Today's answer to a second complete by the owner, and to a complete by a stranger.
  await complete(plain, agents[2]!, { id: ids[2] });
  const again = await refusal(complete(plain, agents[2]!, { id: ids[2] }));
  assert.equal(again?.code, 'conflict');
  const stranger = agentOf(eps[0]!, 'stranger');
  // The first call runs alone; the other four queue behind it and share one statement.
  // The stranger's complete comes first in the batch and must not take todo 1 from its owner.
  const answers = await Promise.all([
    refusal(complete(r.deps, agents[0]!, { id: ids[0], result: 'lone' })),
    refusal(complete(r.deps, stranger, { id: ids[1], result: 'stranger' })),
    refusal(complete(r.deps, agents[1]!, { id: ids[1], result: 'first' })),
    refusal(complete(r.deps, agents[1]!, { id: ids[1], result: 'second' })),
    refusal(complete(r.deps, agents[1]!, { id: ids[1], result: 'third' })),
  ]);
  assert.deepEqual(await served(r.metrics, 'complete'), { calls: 5, statements: 2 });
  assert.deepEqual(taken('complete_many'), { ok: 1, failed: 0 }, 'the four went in one statement that committed');
  assert.equal(answers[0], null);
  assert.equal(answers[1]?.code, 'conflict', 'the stranger is refused');
  const wins = answers.slice(2).filter((a) => a === null).length;
  assert.equal(wins, 1, 'exactly one of the owner’s completes wins');
  for (const a of answers.slice(2)) if (a !== null) assert.deepEqual(a, again);
  const rows = await rowsOf([ids[1]!]);
  assert.ok(['first', 'second', 'third'].includes(rows.get(ids[1]!)?.result as string));
  const attempts = await attemptsOf([ids[1]!]);
  assert.deepEqual(
    attempts.map((a) => [a.outcome, a.session_id]),
    [['completed', agents[1]!.sessionId]],
  );
});

test('a batch failing on one input’s bad data fails only that caller, with its error; the others commit', async () => {
  const r = rig();
  const { agents } = await fleet(1, 6);
  const ids = await claimAll(r.deps, agents);
  const owned = (i: number) => ({ endpointId: agents[i]!.endpointId, id: ids[i]!, sessionId: agents[i]!.sessionId });
  taken('complete');
  // The use cases cut a summary to size and refuse NUL before the statement; the lanes
  // take what the store is given, as a caller past those checks would: a summary past
  // todo_attempts_summary_size, and a result jsonb cannot store.
  const answers = await Promise.allSettled([
    r.lanes.complete({ ...owned(0), result: 0 }),
    r.lanes.complete({ ...owned(1), result: 1 }),
    r.lanes.complete({ ...owned(2), result: 2, summary: 'x'.repeat(3000) }),
    r.lanes.complete({ ...owned(3), result: 3 }),
    r.lanes.complete({ ...owned(4), result: 'nul \u0000' }),
    r.lanes.complete({ ...owned(5), result: 5 }),
  ]);
  assert.deepEqual(await served(r.metrics, 'complete'), { calls: 6, statements: 2 });
  assert.deepEqual(taken('complete_many'), { ok: 0, failed: 1 }, 'the batch failed, then each input ran alone');
  assert.deepEqual(taken('complete'), { ok: 4, failed: 2 }, 'the first alone, then each of the batch alone');
  const reason = (k: number) => {
    const a = answers[k]!;
    assert.equal(a.status, 'rejected', `input ${k} fails`);
    return a.reason as { code?: string; constraint?: string };
  };
  assert.deepEqual([reason(2).code, reason(2).constraint], ['23514', 'todo_attempts_summary_size']);
  assert.equal(reason(4).code, '22P05');
  for (const k of [0, 1, 3, 5]) {
    const a = answers[k]!;
    assert.equal(a.status, 'fulfilled', `input ${k} commits`);
    assert.equal(a.value?.id, ids[k]);
  }
  const rows = await rowsOf(ids);
  const attempts = await attemptsOf(ids);
  ids.forEach((id, k) => {
    const bad = k === 2 || k === 4;
    assert.equal(rows.get(id)?.state, bad ? 'claimed' : 'done');
    const a = attempts.find((x) => x.todo_id === id)!;
    assert.deepEqual([a.outcome, a.ended], bad ? [null, false] : ['completed', true]);
  });
});

test('a batch whose backend is killed mid-statement fails every caller of it, writes nothing, and a retry commits', async () => {
  const r = rig();
  const { agents } = await fleet(1, 6);
  const ids = await claimAll(r.deps, agents);
  // A transaction locks todo 5 and, in a savepoint, todo 0. Todo 0's complete runs alone
  // and waits; todos 1–5 queue behind it. Rolling back the savepoint lets todo 0 commit;
  // the batch then updates 1–4 and waits on todo 5's lock, and its backend is killed.
  const holder = await pool.connect();
  const blockedBy = async (pid: number) => {
    const res = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
      [pid],
    );
    return res.rows.map((x) => x.pid);
  };
  try {
    const { rows } = await holder.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`);
    const holderPid = rows[0]!.pid;
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM todos WHERE id = $1 FOR UPDATE`, [ids[5]]);
    await holder.query('SAVEPOINT first');
    await holder.query(`SELECT 1 FROM todos WHERE id = $1 FOR UPDATE`, [ids[0]]);
    taken('complete');
    const lone = complete(r.deps, agents[0]!, { id: ids[0] });
    await until(async () => (await blockedBy(holderPid)).length === 1, 'the lone complete to wait on the lock');
    const batch = [1, 2, 3, 4, 5].map((i) =>
      complete(r.deps, agents[i]!, { id: ids[i] }).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    await holder.query('ROLLBACK TO SAVEPOINT first');
    assert.equal((await lone).todo.state, 'done');
    let victim = 0;
    await until(async () => {
      const pids = await blockedBy(holderPid);
      victim = pids[0] ?? 0;
      return pids.length === 1;
    }, 'the batch to wait on the lock');
    await pool.query(`SELECT pg_terminate_backend($1)`, [victim]);
    const errors = (await Promise.all(batch)) as ({ code?: string } | null)[];
    assert.deepEqual(await served(r.metrics, 'complete'), { calls: 6, statements: 2 });
    assert.deepEqual(taken('complete_many'), { ok: 0, failed: 1 }, 'the batch failed and ran nothing again');
    assert.deepEqual(taken('complete'), { ok: 1, failed: 0 }, 'only the first ran alone');
    errors.forEach((e, k) => {
      assert.ok(e && !(e instanceof AppError), `caller ${k + 1} gets the connection's error`);
      assert.equal(e.code, '57P01', `caller ${k + 1}: terminated`);
    });
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    holder.release();
  }
  // Nothing of the killed batch was written: todos 1–5 are still claimed, attempts open.
  const before = await rowsOf(ids.slice(1));
  assert.ok([...before.values()].every((row) => row.state === 'claimed'));
  assert.ok((await attemptsOf(ids.slice(1))).every((a) => !a.ended));
  // The callers retry, as they would after any failed call, and commit.
  const retried = await together(agents.slice(1), (agent, k) => complete(r.deps, agent, { id: ids[k + 1] }));
  assert.ok(retried.every((x) => x.todo.state === 'done'));
  const after = await attemptsOf(ids);
  assert.ok(after.every((a) => a.outcome === 'completed' && a.ended));
});
