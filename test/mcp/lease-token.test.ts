// Pins lease tokens and what an attempt leaves (docs/design/todos.md, "Lease tokens",
// "What an attempt leaves"): a claim answers a token that settles it from any session of
// the endpoint; a stale token (after a takeover, a reap, a settle) is conflict naming
// the case; the session rule without a token is unchanged; summaries and artifacts reach
// the next claim as prior_attempts and get_todo's attempts; the attempts cap holds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reapExpired } from '../../src/store/todo-sweeps.js';
import { testDatabase } from '../helpers/db.js';
import { connect, fails, ok, startApp, vend, type Connected } from './harness.js';

const { pool } = await testDatabase('mcp_lease_token');
const { url } = await startApp(pool, 'instance-lease');

async function pushed(c: Connected, title = 'a todo'): Promise<string> {
  return (await ok(c, 'create_todo', { queue: 'inbox', title })).todo.id as string;
}

/** An attempt as get_todo and prior_attempts show it. */
interface Attempt {
  seq: number;
  attempt: number;
  outcome: string | null;
  summary: string | null;
  summary_truncated: boolean;
  artifact: string | null;
  ended_at: string;
}

/** Two sessions of one endpoint: the claimer and another. */
async function twoSessions(): Promise<[Connected, Connected]> {
  const { credential } = await vend(pool);
  return [await connect(url, credential, 'claimer'), await connect(url, credential, 'other')];
}

/** Moves the todo's lease into the past, as time passing would. */
async function lapse(id: string): Promise<void> {
  await pool.query(
    `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second'
      WHERE id = $1`,
    [id],
  );
}

test('a claim answers a lease token that heartbeats and completes the todo from another session', async () => {
  const [a, b] = await twoSessions();
  const id = await pushed(a);
  const claimed = await ok(a, 'claim', { id });
  const token: string = claimed.lease_token;
  assert.match(token, /^lt_[A-Za-z0-9_-]{43}$/);
  const stored = await pool.query<{ hash: Buffer }>(
    'SELECT lease_token_hash AS hash FROM todo_attempts WHERE todo_id = $1',
    [id],
  );
  const hash = stored.rows[0]?.hash;
  assert.equal(hash?.length, 32, 'only the SHA-256 is kept');
  assert.notEqual(hash.toString('utf8'), token);

  const beat = await ok(b, 'heartbeat', { id, lease_token: token, lease_seconds: 900 });
  assert.ok(Date.parse(beat.todo.lease_expires_at) > Date.parse(claimed.todo.lease_expires_at));
  const done = await ok(b, 'complete', {
    id,
    lease_token: token,
    result: { ok: true },
    summary: 'fixed the flaky test',
    artifact: 'https://git.example/commit/abc123',
  });
  assert.equal(done.todo.state, 'done');
  // The claiming session still owns the row's history: the token did not move the claim.
  assert.equal(done.todo.owner_session_id, a.sessionId);

  const read = await ok(b, 'get_todo', { id });
  assert.deepEqual(
    (read.attempts as Attempt[]).map((x) => [x.seq, x.outcome, x.summary, x.summary_truncated, x.artifact]),
    [[1, 'completed', 'fixed the flaky test', false, 'https://git.example/commit/abc123']],
  );
  assert.equal(JSON.stringify(read).includes(token), false, 'no read shows a token');
});

test('release and fail take the token from another session too', async () => {
  const [a, b] = await twoSessions();
  const id = await pushed(a);
  const first = await ok(a, 'claim_next', {});
  assert.equal(first.todo.id, id);
  assert.equal((await ok(b, 'release', { id, lease_token: first.lease_token })).todo.state, 'pending');
  const second = await ok(a, 'claim_next', {});
  assert.notEqual(second.lease_token, first.lease_token, 'every claim mints its own token');
  const failed = await ok(b, 'fail', { id, lease_token: second.lease_token, error: 'no access' });
  assert.equal(failed.todo.state, 'failed');
  assert.ok(failed.todo.next_retry_at, 'attempts remain: it is retried');
});

test('without a token the session rule is unchanged: another session is told it never held the todo', async () => {
  const [a, b] = await twoSessions();
  const id = await pushed(a);
  await ok(a, 'claim', { id });
  const body = await fails(b, 'complete', { id }, 'conflict');
  assert.match(body.error.message, /this session never held it/);
  assert.match(body.error.message, /lease_token/);
  assert.equal((await ok(a, 'complete', { id })).todo.state, 'done');
});

test('a token after a takeover is conflict: the todo is claimed under another lease', async () => {
  const [a, b] = await twoSessions();
  const id = await pushed(a);
  const old = await ok(a, 'claim', { id });
  await lapse(id);
  const taken = await ok(b, 'claim', { id });
  assert.equal(taken.prior_attempts[0].outcome, 'lease_expired');
  for (const verb of ['heartbeat', 'complete', 'fail', 'release']) {
    const body = await fails(a, verb, { id, lease_token: old.lease_token }, 'conflict');
    assert.match(body.error.message, /your lease lapsed and the todo is now claimed under another lease/, verb);
  }
  assert.equal((await ok(a, 'complete', { id, lease_token: taken.lease_token })).todo.state, 'done');
});

test('a token after a reap, after a settle, and a made-up token are conflicts that say which', async () => {
  const [a, b] = await twoSessions();
  const reaped = await pushed(a, 'reaped');
  const r = await ok(a, 'claim', { id: reaped });
  await lapse(reaped);
  await reapExpired(pool, 100);
  let body = await fails(b, 'complete', { id: reaped, lease_token: r.lease_token }, 'conflict');
  assert.match(body.error.message, /your lease lapsed/);

  const settled = await pushed(a, 'settled');
  const s = await ok(a, 'claim', { id: settled });
  await ok(b, 'complete', { id: settled, lease_token: s.lease_token });
  body = await fails(b, 'complete', { id: settled, lease_token: s.lease_token }, 'conflict');
  assert.match(body.error.message, /you already completed the todo/);

  const other = await pushed(a, 'other');
  await ok(a, 'claim', { id: other });
  body = await fails(b, 'complete', { id: other, lease_token: s.lease_token }, 'conflict');
  assert.match(body.error.message, /this lease token names no claim of it/);
});

test("another endpoint's token on its todo answers not_found, as an unknown id does", async () => {
  const [a] = await twoSessions();
  const id = await pushed(a);
  const claimed = await ok(a, 'claim', { id });
  const stranger = await connect(url, (await vend(pool)).credential);
  await fails(stranger, 'complete', { id, lease_token: claimed.lease_token }, 'not_found');
  assert.equal((await ok(a, 'get_todo', { id })).todo.state, 'claimed');
});

test('prior_attempts: the next claim sees what earlier attempts left, newest first, at most 5', async () => {
  const [a] = await twoSessions();
  const id = await pushed(a);
  await pool.query('UPDATE todos SET max_attempts = 10 WHERE id = $1', [id]);
  const long = 'é'.repeat(1500); // 3,000 bytes: cut to 2 KiB at a character boundary
  for (let i = 1; i <= 6; i++) {
    const c = await ok(a, 'claim', { id });
    if (i === 1) assert.deepEqual(c.prior_attempts, []);
    const summary = i === 6 ? long : `attempt ${i}`;
    await ok(a, 'fail', { id, lease_token: c.lease_token, error: `e${i}`, summary, artifact: `log-${i}` });
    await pool.query(`UPDATE todos SET next_retry_at = now(), ready_at = now() WHERE id = $1`, [id]);
  }
  const seventh = await ok(a, 'claim', { id });
  const prior = seventh.prior_attempts as Attempt[];
  assert.deepEqual(
    prior.map((p) => [p.attempt, p.outcome, p.artifact]),
    [6, 5, 4, 3, 2].map((n) => [n, 'failed', `log-${n}`]),
  );
  const [newest, before] = prior;
  assert.ok(newest && before);
  assert.equal(newest.summary_truncated, true);
  assert.equal(Buffer.byteLength(newest.summary ?? '', 'utf8'), 2048);
  assert.equal(newest.summary, 'é'.repeat(1024));
  assert.deepEqual([before.summary, before.summary_truncated], ['attempt 5', false]);
  assert.ok(!Number.isNaN(Date.parse(newest.ended_at)));
});

test('fail with retry: false dead-letters the todo at once', async () => {
  const [a] = await twoSessions();
  const id = await pushed(a);
  const c = await ok(a, 'claim', { id });
  const failed = await ok(a, 'fail', { id, lease_token: c.lease_token, error: 'not fixable', retry: false });
  assert.deepEqual([failed.todo.state, failed.todo.next_retry_at], ['failed', null]);
  assert.deepEqual(await ok(a, 'claim_next', {}), { empty: true });
});

test('an artifact over 512 bytes, a summary over 64 KiB and a NUL are invalid_argument naming the field', async () => {
  const [a] = await twoSessions();
  const id = await pushed(a);
  const c = await ok(a, 'claim', { id });
  await fails(
    a,
    'complete',
    { id, lease_token: c.lease_token, artifact: 'x'.repeat(513) },
    'invalid_argument',
    'artifact',
  );
  await fails(a, 'complete', { id, summary: 'x'.repeat(64 * 1024 + 1) }, 'invalid_argument', 'summary');
  await fails(a, 'release', { id, summary: 'a\u0000b' }, 'invalid_argument', 'summary');
  await fails(a, 'heartbeat', { id, lease_token: '' }, 'invalid_argument', 'lease_token');
  assert.equal((await ok(a, 'get_todo', { id })).todo.state, 'claimed', 'nothing was half-written');
});

test('SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO caps the attempts a todo keeps: the oldest ended ones go', async () => {
  const capped = await startApp(pool, 'instance-capped', undefined, {
    env: { SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO: '5' },
  });
  const c = await connect(capped.url, (await vend(pool)).credential);
  const id = await pushed(c);
  for (let i = 0; i < 8; i++) {
    const claimed = await ok(c, 'claim', { id });
    await ok(c, 'release', { id, lease_token: claimed.lease_token, summary: `pass ${i + 1}` });
  }
  const last = await ok(c, 'claim', { id });
  const rows = await pool.query<{ seq: number }>('SELECT seq FROM todo_attempts WHERE todo_id = $1 ORDER BY seq', [id]);
  assert.deepEqual(
    rows.rows.map((r) => r.seq),
    [5, 6, 7, 8, 9],
  );
  // The claim reads the history as it was before its own prune.
  assert.deepEqual(
    (last.prior_attempts as Attempt[]).map((p) => p.summary),
    ['pass 8', 'pass 7', 'pass 6', 'pass 5', 'pass 4'],
  );
  assert.equal((await ok(c, 'complete', { id, lease_token: last.lease_token })).todo.state, 'done');
});
