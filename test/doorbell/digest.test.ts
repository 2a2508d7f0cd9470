// Pins the claim's acknowledgement of digests (docs/design/doorbell-acknowledgement.md,
// "A claim"): any claim of the endpoint acknowledges its open digest rings in the claim's
// transaction; other todos' rings and other endpoints' digests are left alone.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { insertRings, type RingRecord } from '../../src/store/doorbell-rings.js';
import { claim, claimNext, createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('doorbell_digest');

function record(endpointId: string, kind: 'todo' | 'digest', todoId: string | null): RingRecord {
  return {
    id: newId('rg'),
    endpointId,
    sessionId: 'ms_x',
    todoId,
    kind,
    queue: null,
    synthetic: false,
    ageMs: 1_000,
    claimsBefore: 0,
  };
}

async function acked(id: string) {
  const res = await pool.query<{ ack_via: string | null; acked_session_id: string | null }>(
    'SELECT ack_via, acked_session_id FROM doorbell_rings WHERE id = $1',
    [id],
  );
  return { ...res.rows[0] };
}

test("any claim acknowledges the endpoint's open digest rings, and nothing else", async () => {
  const mine = await makeEndpoint(pool);
  const other = await makeEndpoint(pool);
  const deps = depsOf(pool);
  const create = (endpointId: string, title: string) =>
    createTodo(deps, { endpointId }, { humanId: 'hu_x' }, { queue: 'inbox', title });
  const { todo: first } = await create(mine.id, 'first');
  const { todo: second } = await create(mine.id, 'second');
  const digest = record(mine.id, 'digest', null);
  const foreignDigest = record(other.id, 'digest', null);
  const secondRing = record(mine.id, 'todo', second.id);
  await insertRings(pool, [digest, foreignDigest, secondRing]);

  const taken = await claim(deps, agentOf(mine, 'ms_claimer'), { id: first.id });
  assert.equal(taken.todo.id, first.id);
  assert.deepEqual(await acked(digest.id), { ack_via: 'claim', acked_session_id: 'ms_claimer' });
  assert.deepEqual(await acked(foreignDigest.id), { ack_via: null, acked_session_id: null });
  assert.deepEqual(await acked(secondRing.id), { ack_via: null, acked_session_id: null });

  const next = await claimNext(deps, agentOf(mine, 'ms_other'), {});
  assert.ok('todo' in next && next.todo.id === second.id);
  assert.deepEqual(await acked(secondRing.id), { ack_via: 'claim', acked_session_id: 'ms_other' });
});
