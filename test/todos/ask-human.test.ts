// Pins asking a human (docs/design/ask-human.md) end to end over two real instances: an
// agent on one parks its claimed todo with ask_human, the owner answers with the CLI
// against the other, and the agent's long-poll wakes with the answer; a timeout brings it
// back with timed_out; a cancel ends it; a parked todo frees its budget slot; and the
// races (an answer against the timeout sweep, two answers) have exactly one winner.

import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setPolicy } from '../../src/budgets/service.js';
import { timeOutAsks } from '../../src/store/asks.js';
import { runCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { endpointOf, owner, server } from '../doorbell/world.js';
import { connect, fails, ok, type Body, type Connected } from '../mcp/harness.js';

const { pool, url: dbUrl } = await testDatabase('ask_human');
const a = await server(dbUrl, 'ask-a');
const b = await server(dbUrl, 'ask-b');
const me = await owner(pool);
const email = (await pool.query<{ email: string }>('SELECT email FROM humans WHERE id = $1', [me.humanId])).rows[0]
  ?.email;
const dir = await mkdtemp(join(tmpdir(), 'switchboard-ask-'));

/** An endpoint of the owner's and an agent connected to instance B. */
async function agentOnB(name: string): Promise<{ c: Connected; endpointId: string }> {
  const ep = await endpointOf(pool, me.humanId, name);
  return { c: await connect(b.url, ep.credential, name, { channel: false }), endpointId: ep.id };
}

/** A todo made, claimed and parked on a question; its id and the claim's lease token. */
async function parked(c: Connected, args: Record<string, unknown> = {}): Promise<{ id: string; asked: Body }> {
  const id = (await ok(c, 'create_todo', { queue: 'inbox', title: 'deploy?' })).todo.id as string;
  const claim = await ok(c, 'claim', { id });
  const asked = await ok(c, 'ask_human', {
    id,
    lease_token: claim.lease_token,
    question: 'Merge the release branch now?',
    ...args,
  });
  return { id, asked };
}

/** POST /api/v1/todos/{id}/answer on an instance as the owner. */
async function answer(base: string, id: string, body: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${base}/api/v1/todos/${id}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${me.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Moves a question's expiry into the past, as time passing would. */
async function expire(id: string): Promise<void> {
  await pool.query(`UPDATE todo_asks SET expires_at = now() - interval '1 second' WHERE todo_id = $1`, [id]);
}

async function askRows(id: string): Promise<Array<{ outcome: string | null; answered_by: string | null }>> {
  const res = await pool.query<{ outcome: string | null; answered_by: string | null }>(
    'SELECT outcome, answered_by FROM todo_asks WHERE todo_id = $1 ORDER BY seq',
    [id],
  );
  return res.rows;
}

test('a parked todo waits on its owner, unclaimable; the CLI answer on instance A wakes the long-poll on B with it', async () => {
  const { c } = await agentOnB('asker');
  const { id, asked } = await parked(c, { choices: ['merge', 'wait for QA'] });
  assert.equal(asked.todo.state, 'waiting_on_human');
  assert.equal(asked.todo.owner_session_id, null);
  assert.equal(asked.todo.lease_expires_at, null);
  assert.ok(Date.parse(asked.expires_at) > Date.now());

  const read = await ok(c, 'get_todo', { id });
  assert.equal(read.todo.waiting.reason, 'waiting_on_human');
  assert.equal(read.todo.waiting.question, 'Merge the release branch now?');
  assert.deepEqual(read.todo.waiting.choices, ['merge', 'wait for QA']);
  assert.ok(Date.parse(read.todo.waiting.since) <= Date.now());
  assert.deepEqual(read.answers, []);
  assert.deepEqual(
    (read.attempts as Array<{ outcome: string }>).map((x) => x.outcome),
    ['asked'],
  );
  assert.deepEqual(await ok(c, 'claim_next', {}), { empty: true }, 'a parked todo is not claimable');
  await fails(c, 'claim', { id }, 'conflict');

  const waiting = ok(c, 'claim_next', { wait_seconds: 30 });
  await until(() => b.waiters.waiting() > 0, 'the long-poll to wait on B');
  const cli = await runCli(['todo', 'answer', id, '--choice', '0', '--url', a.url, '--json'], {
    XDG_CONFIG_HOME: dir,
    SWITCHBOARD_TOKEN: me.token,
  });
  assert.equal(cli.code, 0, cli.stderr);
  const answered = JSON.parse(cli.stdout);
  assert.equal(answered.todo.state, 'pending');
  assert.equal(answered.todo.priority, 100, 'it comes back first in its queue');

  const claimed = await waiting;
  assert.equal(claimed.todo.id, id);
  assert.equal(claimed.answers.length, 1);
  const [got] = claimed.answers;
  assert.equal(got.question, 'Merge the release branch now?');
  assert.equal(got.choice, 0);
  assert.deepEqual(got.choices, ['merge', 'wait for QA']);
  assert.equal(got.by, email);
  assert.equal(typeof got.at, 'string');
  assert.equal(got.text, undefined);
  assert.equal(claimed.timed_out, undefined);
  assert.equal(claimed.prior_attempts[0].outcome, 'asked');
  assert.equal(claimed.prior_attempts[0].ask.choice, 0);
  assert.equal(claimed.prior_attempts[0].ask.outcome, 'answered');
  assert.equal(claimed.todo.attempt, 1, 'asking did not spend an attempt');

  const again = await runCli(['todo', 'answer', id, 'too late', '--url', a.url], {
    XDG_CONFIG_HOME: dir,
    SWITCHBOARD_TOKEN: me.token,
  });
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /no longer waiting on a human/);
  await ok(c, 'complete', { id, lease_token: claimed.lease_token });
});

test('an answered todo is claimed ahead of the work that queued while it waited', async () => {
  const { c } = await agentOnB('first-in-line');
  const { id } = await parked(c);
  for (const title of ['later one', 'later two']) await ok(c, 'create_todo', { queue: 'inbox', title, priority: 50 });
  const res = await answer(a.url, id, { text: 'yes, merge' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const next = await ok(c, 'claim_next', {});
  assert.equal(next.todo.id, id);
  assert.equal(next.answers[0].text, 'yes, merge');
});

test('a question nobody answers times out: the sweep puts the todo back with timed_out and no answerer', async () => {
  const { c } = await agentOnB('timeout');
  const { id } = await parked(c, { timeout_seconds: 60 });
  assert.deepEqual(await timeOutAsks(pool, { limit: 10, priority: 100 }), [], 'not before its expiry');
  await expire(id);
  const timed = await timeOutAsks(pool, { limit: 10, priority: 100 });
  assert.deepEqual(
    timed.map((t) => t.todo_id),
    [id],
  );
  const claimed = await ok(c, 'claim_next', {});
  assert.equal(claimed.todo.id, id);
  assert.equal(claimed.timed_out, true);
  assert.equal(claimed.answers[0].timed_out, true);
  assert.equal(claimed.answers[0].by, null);
  assert.deepEqual(await askRows(id), [{ outcome: 'timed_out', answered_by: null }]);
  const late = await answer(a.url, id, { text: 'sorry, was away' });
  assert.equal(late.status, 409);
  assert.equal(late.body.error.code, 'conflict');
});

test('the owner cancels a waiting todo: the question closes as canceled and a later answer is conflict', async () => {
  const { c } = await agentOnB('cancel');
  const { id } = await parked(c);
  const res = await fetch(`${a.url}/api/v1/todos/${id}/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${me.token}` },
  });
  assert.equal(res.status, 200);
  const canceled: Body = await res.json();
  assert.equal(canceled.todo.state, 'canceled');
  assert.deepEqual(await askRows(id), [{ outcome: 'canceled', answered_by: null }]);
  const late = await answer(a.url, id, { text: 'go' });
  assert.equal(late.status, 409);
  assert.match(late.body.error.message, /canceled/);
});

test('ask_human refuses what it cannot do, naming the field or the reason', async () => {
  const { c } = await agentOnB('refusals');
  const id = (await ok(c, 'create_todo', { queue: 'inbox', title: 'x' })).todo.id as string;
  await fails(c, 'ask_human', { id, question: 'q?' }, 'conflict');
  const claim = await ok(c, 'claim', { id });
  const base = { id, lease_token: claim.lease_token };
  await fails(c, 'ask_human', { ...base, question: '  ' }, 'invalid_argument', 'question');
  await fails(c, 'ask_human', { ...base, question: 'q?', choices: ['only one'] }, 'invalid_argument', 'choices');
  await fails(c, 'ask_human', { ...base, question: 'q?', timeout_seconds: 30 * 86_400 }, 'invalid_argument');
  await fails(c, 'ask_human', { ...base, lease_token: 'lt_wrong', question: 'q?' }, 'conflict');
  await ok(c, 'ask_human', { ...base, question: 'pick', choices: ['a', 'b'] });
  const bad = await answer(a.url, id, { choice: 2 });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /^choice: must be from 0 to 1/);
  const both = await answer(a.url, id, { text: 'a', choice: 0 });
  assert.equal(both.status, 400);
  const stranger = await owner(pool);
  const foreign = await fetch(`${a.url}/api/v1/todos/${id}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stranger.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ choice: 0 }),
  });
  assert.equal(foreign.status, 404, "another human's todo answers like an unknown one");
});

test('a parked todo frees its in-flight slot: the budget admits the next todo at once', async () => {
  const { c, endpointId } = await agentOnB('budget');
  await setPolicy({ db: pool }, { humanId: me.humanId, endpointId: null }, endpointId, 'inbox', {
    max_in_flight: 1,
  });
  const first = (await ok(c, 'create_todo', { queue: 'inbox', title: 'one' })).todo.id as string;
  await ok(c, 'create_todo', { queue: 'inbox', title: 'two' });
  const claim = await ok(c, 'claim_next', {});
  assert.equal(claim.todo.id, first);
  const held = await ok(c, 'claim_next', {});
  assert.equal(held.empty, true);
  assert.equal(held.deferred[0].reason, 'in_flight_full');
  await ok(c, 'ask_human', { id: first, lease_token: claim.lease_token, question: 'ok?' });
  const next = await ok(c, 'claim_next', {});
  assert.equal(next.todo.title, 'two');
  assert.equal(next.admission.in_flight, 1);
});

test('an answer racing the timeout sweep: exactly one of them acts, and the outcome is the winner’s', async () => {
  const { c } = await agentOnB('race-timeout');
  for (let round = 0; round < 8; round++) {
    const { id } = await parked(c);
    await expire(id);
    const [res, timed] = await Promise.all([
      answer(round % 2 === 0 ? a.url : b.url, id, { text: `round ${round}` }),
      timeOutAsks(pool, { limit: 10, priority: 100 }),
    ]);
    const swept = timed.some((t) => t.todo_id === id);
    assert.equal(res.status === 200, !swept, `round ${round}: ${res.status} and swept ${swept}`);
    if (res.status !== 200) assert.equal(res.body.error.code, 'conflict');
    assert.deepEqual(await askRows(id), [
      swept ? { outcome: 'timed_out', answered_by: null } : { outcome: 'answered', answered_by: email },
    ]);
    const claimed = await ok(c, 'claim', { id });
    assert.equal(claimed.answers.length, 1, 'an answer that won is never lost');
    await ok(c, 'complete', { id, lease_token: claimed.lease_token });
  }
});

test('two answers racing from two instances: one wins, the other is told conflict', async () => {
  const { c } = await agentOnB('race-answers');
  for (let round = 0; round < 8; round++) {
    const { id } = await parked(c, { choices: ['yes', 'no'] });
    const results = await Promise.all([answer(a.url, id, { choice: 0 }), answer(b.url, id, { choice: 1 })]);
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409], `round ${round}`);
    const loser = results.find((r) => r.status === 409);
    assert.equal(loser?.body.error.code, 'conflict');
    const winner = results.find((r) => r.status === 200);
    const claimed = await ok(c, 'claim', { id });
    assert.equal(claimed.answers.length, 1);
    assert.equal(claimed.answers[0].choice, results.indexOf(winner as (typeof results)[number]));
    await ok(c, 'complete', { id, lease_token: claimed.lease_token });
  }
});
