// Pins the presence sweep on a real database: shift boundaries and ended overrides change
// presence once however many instances evaluate together, and a change to in owes exactly
// one digest; the doorbell gate follows the recorded presence.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { PresenceService, type DigestSender } from '../../src/presence/digest.js';
import { clockIn, clockOut, setShift } from '../../src/presence/manage.js';
import { claimRings } from '../../src/store/rings.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';

const { pool } = await testDatabase('presence_sweep');
const log = pino({ level: 'silent' });

function services(n: number) {
  const rung: Array<{ endpointId: string; meta: Record<string, string> }> = [];
  const sender: DigestSender = {
    async send(ring, params) {
      rung.push({ endpointId: ring.endpointId, meta: params.meta });
    },
  };
  return { rung, all: Array.from({ length: n }, () => new PresenceService({ db: pool, log, doorbell: sender })) };
}

async function endpointWithWork(titles: string[]) {
  const v = await vend(pool);
  await pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel) VALUES ($1, $2, 'x', true, true)`,
    [v.endpoint.id, `ms_${v.endpoint.id}`],
  );
  for (const title of titles) {
    await createTodo(
      { db: pool, defaultLeaseSeconds: 300 },
      { endpointId: v.endpoint.id },
      { humanId: v.humanId },
      {
        queue: 'inbox',
        title,
      },
    );
  }
  return v;
}

async function seen(endpointId: string): Promise<{ presence_seen: string; digest_due_at: Date | null }> {
  const res = await pool.query('SELECT presence_seen, digest_due_at FROM endpoints WHERE id = $1', [endpointId]);
  return res.rows[0] as { presence_seen: string; digest_due_at: Date | null };
}

test('a shift that has started is recorded once by four racing sweeps and owes one digest', async () => {
  const v = await endpointWithWork(['a', 'b']);
  await setShift({ db: pool }, v.endpoint.id, { shift: 'TZ=UTC; 00:00-24:00' });
  // As it was before the boundary: recorded out.
  await pool.query(`UPDATE endpoints SET presence_seen = 'out' WHERE id = $1`, [v.endpoint.id]);
  const { rung, all } = services(4);
  const results = await Promise.all(all.map((s) => s.evaluate()));
  assert.equal(
    results.reduce((n, r) => n + r.changed, 0),
    1,
  );
  await Promise.all(all.map((s) => s.digest(v.endpoint.id)));
  const mine = rung.filter((r) => r.endpointId === v.endpoint.id);
  assert.equal(mine.length, 1);
  assert.equal(mine[0]?.meta.reason, 'shift_start');
  assert.equal(mine[0]?.meta.pending, '2');
  assert.equal((await seen(v.endpoint.id)).digest_due_at, null);
});

test('a shift that has ended records out and the doorbell stops ringing the endpoint', async () => {
  const v = await endpointWithWork([]);
  // Every day 00:00-00:01 UTC: off shift for all but one minute of a day.
  await setShift({ db: pool }, v.endpoint.id, { shift: 'TZ=UTC; 00:00-00:01' });
  await pool.query(`UPDATE endpoints SET presence_seen = 'in' WHERE id = $1`, [v.endpoint.id]);
  const { all } = services(2);
  await Promise.all(all.map((s) => s.evaluate()));
  const onShift = new Date().getUTCHours() === 0 && new Date().getUTCMinutes() === 0;
  assert.equal((await seen(v.endpoint.id)).presence_seen, onShift ? 'in' : 'out');
  await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: v.endpoint.id },
    { humanId: v.humanId },
    {
      queue: 'inbox',
      title: 'after hours',
    },
  );
  const rung = await claimRings(pool, {
    endpointId: v.endpoint.id,
    maxRings: 6,
    limit: 10,
    reason: { kind: 'ready', queue: 'inbox' },
  });
  assert.equal(rung.length, onShift ? 1 : 0);
  const budget = await pool.query('SELECT ring_attempts FROM todos WHERE endpoint_id = $1', [v.endpoint.id]);
  assert.equal(budget.rows[0]?.ring_attempts, onShift ? 1 : 0);
});

test('a change to in with no pending work claims the digest and rings nobody', async () => {
  const v = await endpointWithWork([]);
  await pool.query(
    `UPDATE endpoints SET presence_seen = 'out', presence_override = 'out',
    override_until = now() - interval '1 second', override_by = 'agent' WHERE id = $1`,
    [v.endpoint.id],
  );
  const { rung, all } = services(2);
  await Promise.all(all.map((s) => s.evaluate()));
  await Promise.all(all.map((s) => s.digest(v.endpoint.id)));
  assert.equal((await seen(v.endpoint.id)).presence_seen, 'in');
  assert.equal(rung.filter((r) => r.endpointId === v.endpoint.id).length, 0);
  assert.equal((await seen(v.endpoint.id)).digest_due_at, null);
});

test('a clock_in racing the sweep is recorded as clock_in, never as the sweep’s shift_start', async () => {
  const v = await endpointWithWork(['a']);
  const { all } = services(3);
  let running = true;
  const sweeps = all.map(async (s) => {
    while (running) await s.evaluate();
  });
  try {
    for (let round = 0; round < 40; round += 1) {
      await clockOut({ db: pool }, v.endpoint.id, {});
      await clockIn({ db: pool }, v.endpoint.id, { for: '1h' });
      const res = await pool.query('SELECT presence_seen, digest_reason FROM endpoints WHERE id = $1', [v.endpoint.id]);
      assert.deepEqual(res.rows[0], { presence_seen: 'in', digest_reason: 'clock_in' }, `round ${round}`);
    }
  } finally {
    running = false;
    await Promise.all(sweeps);
  }
});

test('a clock_out racing the sweep over an ended override stays out: the sweep confirms a change on the locked row', async () => {
  const v = await endpointWithWork(['a']);
  const { all } = services(3);
  for (let round = 0; round < 40; round += 1) {
    // An agent clock-out that ended a second ago: the sweep owes the change to in.
    await pool.query(
      `UPDATE endpoints SET presence_override = 'out', override_until = now() - interval '1 second',
              override_by = 'agent', presence_seen = 'out' WHERE id = $1`,
      [v.endpoint.id],
    );
    await Promise.all([...all.map((s) => s.evaluate()), clockOut({ db: pool }, v.endpoint.id, {})]);
    const res = await pool.query('SELECT presence_seen FROM endpoints WHERE id = $1', [v.endpoint.id]);
    assert.equal(res.rows[0].presence_seen, 'out', `round ${round}: recorded in while clocked out`);
  }
});
