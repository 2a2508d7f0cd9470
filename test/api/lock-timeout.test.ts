// lock_timeout and statement_timeout on request paths (docs/design/scale.md): a request
// that waits for a row lock longer than SWITCHBOARD_LOCK_TIMEOUT, or whose statement runs
// past SWITCHBOARD_STATEMENT_TIMEOUT, answers a retryable `unavailable`, never `internal`,
// and the same request goes through once the holder lets go.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createPool } from '../../src/db/pool.js';
import { toolError } from '../../src/mcp/errors.js';
import { testDatabase } from '../helpers/db.js';
import { toolError as toolErrorOf } from '../helpers/tool-result.js';
import { expectError, expectStatus, Harness, makePeople, push, PUBLIC_URL, vend } from './app.js';

const db = await testDatabase('lock_timeout');
// The app's own pool with a small lock_timeout; db.pool (none) plays the lock holder.
const guarded = createPool({ url: db.url, max: 4, lockTimeoutMs: 200 });
const h = await new Harness(guarded).init({ env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
// A second app whose pool has only a statement_timeout: the same wait ends as 57014.
const timed = createPool({ url: db.url, max: 4, statementTimeoutMs: 300 });
const ht = await new Harness(timed).init({ env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
after(async () => {
  await h.close();
  await guarded.end();
  await ht.close();
  await timed.end();
});
const { member } = await makePeople(h);

test('a pooled connection carries the configured lock_timeout', async () => {
  const res = await guarded.query<{ lock_timeout: string }>('SHOW lock_timeout');
  assert.equal(res.rows[0]?.lock_timeout, '200ms');
});

test('a cancel waiting on a row another transaction holds answers unavailable (503, Retry-After) and works once it is free', async () => {
  const endpoint = await vend(h, member);
  const todo = await push(h, member, endpoint.endpoint.slug);
  const holder = await db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM todos WHERE id = $1 FOR UPDATE', [todo.id]);
    const refused = await h.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
    expectError(refused, 503, 'unavailable');
    assert.match(refused.body.error.message, /locked by another operation; retry/);
    assert.ok(refused.headers['retry-after'], 'a retryable answer says when to retry');
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  const state = await db.pool.query<{ state: string }>('SELECT state FROM todos WHERE id = $1', [todo.id]);
  assert.equal(state.rows[0]?.state, 'pending', 'the refused cancel changed nothing');
  const retried = await h.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
  expectStatus(retried, 200, 'the retry');
  assert.equal(retried.body.todo.state, 'canceled');
});

test('an MCP verb whose statement lost a lock wait answers the same retryable unavailable', () => {
  const lockError = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
  const logged: unknown[] = [];
  const result = toolError(lockError, { error: (obj) => logged.push(obj) }, 'claim');
  assert.equal(result.isError, true);
  const error = toolErrorOf(result);
  assert.equal(error.code, 'unavailable');
  assert.match(error.message, /locked by another operation/);
  assert.deepEqual(logged, [], 'not logged as an internal failure');
});

test('a statement cancelled by statement_timeout answers unavailable naming the setting, on the API and over MCP', async () => {
  const endpoint = await vend(h, member);
  const todo = await push(h, member, endpoint.endpoint.slug);
  const holder = await db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM todos WHERE id = $1 FOR UPDATE', [todo.id]);
    const refused = await ht.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
    expectError(refused, 503, 'unavailable');
    assert.match(refused.body.error.message, /SWITCHBOARD_STATEMENT_TIMEOUT/);
    assert.ok(refused.headers['retry-after']);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  const cancelError = await timed.query('SELECT pg_sleep(2)').then(
    () => assert.fail('pg_sleep(2) should pass the 300 ms statement_timeout'),
    (err: Error) => err,
  );
  const logged: unknown[] = [];
  const result = toolError(cancelError, { error: (obj) => logged.push(obj) }, 'claim');
  const error = toolErrorOf(result);
  assert.equal(error.code, 'unavailable');
  assert.match(error.message, /SWITCHBOARD_STATEMENT_TIMEOUT/);
  assert.deepEqual(logged, [], 'not logged as an internal failure');
  const retried = await ht.post(`/api/v1/todos/${todo.id}/cancel`, { token: member.token });
  expectStatus(retried, 200, 'the retry');
});
