// Pins the end of a session's queue (docs/design/message-queue.md, scenario 17): whatever
// ends the session (DELETE, idle expiry, revoke) purges every row, in flight included,
// and advances the generation, so a delivery retry from before is discarded and nothing
// reappears; a stale retry never releases a newer reservation; and a session the caller
// cannot see (another human's, unknown, closed) is "Session not found".

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError, type ErrorCode } from '../../src/domain/errors.js';
import { ackMessage, reservationOf, reserveNext, returnToPending } from '../../src/messages/delivery.js';
import { addMessage, clearMessages, queueStatus } from '../../src/messages/queue.js';
import { revokeEndpoint } from '../../src/store/endpoints.js';
import { closeIdleSessions, closeSession } from '../../src/store/sessions.js';
import { testDatabase } from '../helpers/db.js';
import { depsOf, owner, refOf, stored, user } from './world.js';

const { pool } = await testDatabase('messages_purge');

async function rejects(fn: () => Promise<unknown>, code: ErrorCode) {
  await assert.rejects(fn, (err: unknown) => isAppError(err, code));
}

test('a reserved message whose session ends is purged with the queue; a retry afterwards is discarded', async () => {
  const deps = depsOf(pool);
  const ends: Array<[string, (o: Awaited<ReturnType<typeof owner>>) => Promise<unknown>]> = [
    ['DELETE', (o) => closeSession(pool, o.endpointId, o.sessionId)],
    [
      'idle expiry',
      async (o) => {
        await pool.query(`UPDATE mcp_sessions SET last_seen_at = now() - interval '2 hours' WHERE id = $1`, [
          o.sessionId,
        ]);
        return closeIdleSessions(pool, { idleSeconds: 1800, streamlessSeconds: 300, limit: 1000 });
      },
    ],
    ['revoke', (o) => revokeEndpoint(pool, o.endpointId)],
  ];
  for (const [how, end] of ends) {
    const o = await owner(pool);
    for (let i = 1; i <= 3; i++) await addMessage(deps, user(o), o.sessionId, { content: `m${i}` });
    const reserved = await reserveNext(deps, refOf(o));
    assert.ok(reserved, how);
    const generation = await pool.query('SELECT generation FROM queue_session_locks WHERE session_id = $1', [
      o.sessionId,
    ]);
    await end(o);
    assert.equal((await stored(pool, o.sessionId)).length, 0, how);
    const advanced = await pool.query('SELECT generation FROM queue_session_locks WHERE session_id = $1', [
      o.sessionId,
    ]);
    assert.equal(Number(advanced.rows[0]?.generation), Number(generation.rows[0]?.generation) + 1, how);
    assert.equal(await returnToPending(deps, reservationOf(reserved), true), false, how);
    await rejects(() => ackMessage(deps, refOf(o), { message_id: reserved.id }), 'not_found');
    assert.equal((await stored(pool, o.sessionId)).length, 0, how);
    await rejects(() => addMessage(deps, user(o), o.sessionId, { content: 'late' }), 'not_found');
  }
});

test('a retry of an older reservation never releases a newer one of the same message', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await addMessage(deps, user(o), o.sessionId, { content: 'once' });
  const first = await reserveNext(deps, refOf(o));
  assert.ok(first);
  assert.equal(await returnToPending(deps, reservationOf(first), true), true);
  const second = await reserveNext(deps, refOf(o));
  assert.equal(second?.id, first.id);
  assert.equal(second?.delivery_attempts, 2);
  assert.equal(await returnToPending(deps, reservationOf(first), true), false);
  assert.equal((await stored(pool, o.sessionId))[0]?.reserved_in_flight, true);
});

test('another human’s, an unknown and a closed session are all "Session not found"', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const other = await owner(pool);
  await addMessage(deps, user(other), other.sessionId, { content: 'theirs' });
  const closed = await owner(pool);
  await closeSession(pool, closed.endpointId, closed.sessionId);
  for (const sessionId of [other.sessionId, 'ms_unknown', closed.sessionId]) {
    for (const op of [
      () => addMessage(deps, user(o), sessionId, { content: 'x' }),
      () => queueStatus(deps, user(o), sessionId),
      () => clearMessages(deps, user(o), sessionId),
    ]) {
      await assert.rejects(op, (err: unknown) => isAppError(err, 'not_found') && err.message === 'Session not found');
    }
  }
  assert.equal((await stored(pool, other.sessionId)).length, 1);
});
