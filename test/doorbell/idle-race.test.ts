// One ring per idle agent under real races (docs/design/doorbell-acknowledgement.md, "Who
// is rung"): the ring statement locks the idle sessions it read, and a pass that waited on
// such a lock re-checks the row as the ringing pass left it. These tests call the ring
// statement alone, on connections of their own, as passes on several instances do.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createPool } from '../../src/db/pool.js';
import { claimRings, type RingReason, type RungTodo } from '../../src/store/rings.js';
import { insertSession, setStreamOpen } from '../../src/store/sessions.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { barrier, makeEndpoint } from '../helpers/fixtures.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('doorbell_idle_race');
const racers = createPool({ url, max: 8 });
after(() => racers.end());

type Endpoint = Awaited<ReturnType<typeof makeEndpoint>>;

async function openSession(ep: Endpoint, id: string): Promise<void> {
  await insertSession(pool, { endpointId: ep.id, id, clientName: 'c', clientVersion: '1', instance: 'i1' });
  await setStreamOpen(pool, { endpointId: ep.id, id, instance: 'i1', open: true });
}

async function newTodo(ep: Endpoint, queue: string, title: string): Promise<string> {
  const todo = await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: ep.id },
    { humanId: ep.human_id },
    { queue, title },
  );
  return todo.todo.id;
}

const ring = (db: Parameters<typeof claimRings>[0], ep: Endpoint, reason: RingReason): Promise<RungTodo[]> =>
  claimRings(db, { endpointId: ep.id, maxRings: 6, limit: 16, reason });

test('eight passes racing on their own connections ring one idle session once, round after round', async () => {
  const ep = await makeEndpoint(pool);
  const reasons: RingReason[] = [
    { kind: 'ready', queue: 'inbox' },
    { kind: 'waiting' },
    { kind: 'ready', queue: 'inbox' },
    { kind: 'waiting' },
    { kind: 'ready', queue: 'inbox' },
    { kind: 'waiting' },
    { kind: 'ready', queue: 'inbox' },
    { kind: 'waiting' },
  ];
  for (let round = 0; round < 20; round++) {
    const session = `ms_idle_${round}`;
    await openSession(ep, session);
    for (let i = 0; i < 4; i++) await newTodo(ep, 'inbox', `round ${round} todo ${i}`);
    const go = barrier(reasons.length);
    const passes = await Promise.all(
      reasons.map(async (reason) => {
        await go();
        return ring(racers, ep, { ...reason, ...(reason.kind === 'waiting' ? { sessionId: session } : {}) });
      }),
    );
    const rungs = passes.flat().filter((r) => r.session_id === session);
    assert.equal(rungs.length, 1, `round ${round}: the idle session was rung ${rungs.length} times`);
    // The next round's session is the only idle one: this one stops listening.
    await setStreamOpen(pool, { endpointId: ep.id, id: session, instance: 'i1', open: false });
  }
});

test('a pass that waited on the session while another rang it a todo it cannot see does not ring it again', async () => {
  const ep = await makeEndpoint(pool, { queues: ['inbox', 'urgent'] });
  await openSession(ep, 'ms_seen');
  const older = await newTodo(ep, 'inbox', 'seen by both passes');

  // The first pass is under way: it holds the session's row.
  const first = await racers.connect();
  const second = await racers.connect();
  try {
    await first.query('BEGIN');
    await first.query(`SELECT 1 FROM mcp_sessions WHERE id = 'ms_seen' FOR NO KEY UPDATE`);
    // The second pass takes its snapshot now and waits on that row.
    const pid = (await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    const waiting = ring(second, ep, { kind: 'waiting' });
    await until(
      async () =>
        (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid]))
          .rowCount === 1,
      'the second pass waiting on the session row',
    );
    // Work the second pass's snapshot does not hold arrives, and the first pass rings it.
    const newer = await newTodo(ep, 'urgent', 'after the second pass began');
    const rungFirst = await ring(first, ep, { kind: 'ready', queue: 'urgent' });
    assert.deepEqual(
      rungFirst.map((r) => r.id),
      [newer],
    );
    await first.query('COMMIT');
    // The session is rung; the waiting pass re-reads its row and passes it by.
    assert.deepEqual(await waiting, []);
    const state = await pool.query('SELECT ring_attempts FROM todos WHERE id = $1', [older]);
    assert.equal(state.rows[0]?.ring_attempts, 0, 'the older todo stays due, unspent');
  } finally {
    await first.query('ROLLBACK').catch(() => undefined);
    first.release();
    second.release();
  }
});
