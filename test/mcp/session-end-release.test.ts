// Pins that ending a session releases its claims at once (docs/design/todos.md, "Ending a
// session"): DELETE /mcp and the idle expiry put each claimed todo back to pending with
// its attempt closed as `released`, announce it (todo_ready) so the doorbell rings another
// session, and another session can claim it at once instead of waiting out the lease.
// Revoking the endpoint ends the claims too, by dead-lettering them.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import type { BusEvent } from '../../src/domain/events.js';
import { revokeEndpoint } from '../../src/store/endpoints.js';
import { idleSessionSweep } from '../../src/sweeps/sessions.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok, startApp, vend, type Connected } from './harness.js';

const { pool, url } = await testDatabase('mcp_session_end_release');
const bus = new NotifyBus({ url });
await bus.start();
after(() => bus.stop());
const app = await startApp(pool, 'instance-a', bus);

/** The todo_ready events heard for this endpoint from now on. */
function readyEvents(endpointId: string): Array<BusEvent<'todo_ready'>> {
  const heard: Array<BusEvent<'todo_ready'>> = [];
  const off = bus.subscribe('todo_ready', (event) => {
    if (event.endpoint_id === endpointId) heard.push(event);
  });
  after(off);
  return heard;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function rowAndAttempts(id: string) {
  const todo = await pool.query(
    'SELECT state, owner_session_id, attempt, ready_at <= now() AS ready FROM todos WHERE id = $1',
    [id],
  );
  const attempts = await pool.query(
    'SELECT session_id, outcome, ended_at IS NOT NULL AS ended FROM todo_attempts WHERE todo_id = $1 ORDER BY seq',
    [id],
  );
  return { todo: todo.rows[0], attempts: attempts.rows };
}

/** Session A claims a fresh todo under a long lease; B is the other session of the endpoint. */
async function claimedByA(): Promise<{ endpointId: string; a: Connected; b: Connected; id: string }> {
  const { endpoint, credential } = await vend(pool);
  const a = await connect(app.url, credential, 'agent-a');
  const b = await connect(app.url, credential, 'agent-b');
  const { todo } = await ok(a, 'create_todo', { queue: 'inbox', title: 'held by a' });
  const claim = await ok(a, 'claim', { id: todo.id, lease_seconds: 3600 });
  assert.equal(claim.todo.owner_session_id, a.sessionId);
  return { endpointId: endpoint.id, a, b, id: todo.id };
}

async function assertReleasedTo(b: Connected, id: string, sessionA: string): Promise<void> {
  const { todo, attempts } = await rowAndAttempts(id);
  assert.deepEqual(todo, { state: 'pending', owner_session_id: null, attempt: 1, ready: true });
  assert.deepEqual(attempts, [{ session_id: sessionA, outcome: 'released', ended: true }]);
  const taken = await ok(b, 'claim_next', { queue: 'inbox' });
  assert.equal(taken.todo?.id, id, 'the other session claims it at once');
  assert.equal(taken.todo.owner_session_id, b.sessionId);
}

test('DELETE /mcp releases the session’s claims at once and announces them', async () => {
  const { endpointId, a, b, id } = await claimedByA();
  const heard = readyEvents(endpointId);
  await a.transport.terminateSession();
  await assertReleasedTo(b, id, a.sessionId);
  await until(() => heard.some((e) => e.queue === 'inbox'), 'a todo_ready for the released todo');
});

test('the idle expiry releases the closed session’s claims in the same pass', async () => {
  const { endpointId, a, b, id } = await claimedByA();
  const heard = readyEvents(endpointId);
  await pool.query(
    `UPDATE mcp_sessions SET last_seen_at = now() - interval '2 hours', stream_open = false WHERE id = $1`,
    [a.sessionId],
  );
  const counts = await idleSessionSweep(pool).run();
  assert.ok((counts?.released ?? 0) >= 1, JSON.stringify(counts));
  const closed = await pool.query('SELECT closed_at IS NOT NULL AS closed FROM mcp_sessions WHERE id = $1', [
    a.sessionId,
  ]);
  assert.equal(closed.rows[0]?.closed, true);
  await assertReleasedTo(b, id, a.sessionId);
  await until(() => heard.some((e) => e.queue === 'inbox'), 'a todo_ready for the released todo');
});

test('revoking the endpoint leaves no claim held by its closed sessions', async () => {
  const { endpointId, a, id } = await claimedByA();
  await revokeEndpoint(pool, endpointId);
  const { todo, attempts } = await rowAndAttempts(id);
  assert.equal(todo.owner_session_id === a.sessionId && todo.state === 'claimed', false);
  assert.equal(todo.state, 'failed');
  assert.deepEqual(attempts, [{ session_id: a.sessionId, outcome: 'revoked', ended: true }]);
});

test('closing a session releases only its own claims', async () => {
  const { a, b, id } = await claimedByA();
  const { todo } = await ok(b, 'create_todo', { queue: 'inbox', title: 'held by b' });
  await ok(b, 'claim', { id: todo.id });
  await a.transport.terminateSession();
  assert.equal((await rowAndAttempts(id)).todo.state, 'pending');
  const kept = await rowAndAttempts(todo.id);
  assert.equal(kept.todo.state, 'claimed');
  assert.equal(kept.todo.owner_session_id, b.sessionId);
});
