// Pins "exceeded by nothing" (docs/design/admission.md) with real races: three `serve`
// instances on one database, ten MCP sessions on each, all released together, claiming
// with claim_next and completing, failing or releasing at random. The window counter, the
// attempt rows and switchboard_todos_claimed_total must agree on exactly the limit, and
// the attempt intervals must never show more claims in flight than the cap.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clearPolicy, setPolicy } from '../../src/budgets/service.js';
import type { Server } from '../../src/main.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { barrier } from '../helpers/fixtures.js';
import { call, connect, vend, type Connected } from '../mcp/harness.js';
import { attemptRows, windowUsed } from './fixtures.js';
import { startAwayFromNow } from '../helpers/windows.js';

const { pool, url } = await testDatabase('admission_race');

const SESSIONS_PER_SERVER = 10;

async function maxOverlap(endpointId: string): Promise<number> {
  const res = await pool.query<{ at: Date; delta: number }>(
    `SELECT claimed_at AS at, 1 AS delta FROM todo_attempts WHERE endpoint_id = $1
     UNION ALL
     SELECT ended_at, -1 FROM todo_attempts WHERE endpoint_id = $1 AND ended_at IS NOT NULL
     ORDER BY at, delta`,
    [endpointId],
  );
  let now = 0;
  let peak = 0;
  for (const e of res.rows) {
    now += e.delta;
    peak = Math.max(peak, now);
  }
  return peak;
}

// Each race runs twice: each claim its own statement (a batch of 1), and coalesced
// (docs/design/coalescing.md, "Claims"): budgets never overshoot either way.
for (const batch of ['1', '32']) {
  const mode = batch === '1' ? ' (coalescing off)' : ' (coalesced)';
  const server = (name: string): Promise<Server> =>
    startTestServer(url, `${name}-${batch}`, { SWITCHBOARD_DB_POOL_SIZE: '8', SWITCHBOARD_COALESCE_MAX_BATCH: batch });

  const servers = [await server('race-a'), await server('race-b'), await server('race-c')];

  async function claimedMetric(queue: string): Promise<number> {
    let total = 0;
    for (const s of servers) {
      const metric = await s.metrics.todosClaimed.get();
      total += metric.values.filter((v) => v.labels.queue === queue).reduce((n, v) => n + v.value, 0);
    }
    return total;
  }

  /** A queue with `todos` pending todos and this policy, and 30 sessions across the servers. */
  async function arena(queue: string, todos: number, policy: Record<string, unknown>) {
    const v = await vend(pool, { queues: [queue] });
    await pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, ready_at, created_by_human_id)
       SELECT $1, 'td_' || $2 || lpad(g::text, 20, '0'), $2, 'race ' || g, now(), $3 FROM generate_series(1, $4) g`,
      [v.endpoint.id, queue, v.humanId, todos],
    );
    await setPolicy({ db: pool }, { humanId: v.humanId, endpointId: null }, v.endpoint.id, queue, policy);
    const sessions: Connected[] = [];
    for (const s of servers) {
      for (let i = 0; i < SESSIONS_PER_SERVER; i++) sessions.push(await connect(s.url, v.credential, `racer-${i}`));
    }
    return { endpointId: v.endpoint.id, sessions };
  }

  /** Claims until the window is spent, settling each claim at random after a short hold. */
  async function racer(c: Connected, queue: string, wait: () => Promise<void>): Promise<number> {
    await wait();
    let claims = 0;
    for (;;) {
      const r = await call(c, 'claim_next', { queue, lease_seconds: 60 });
      assert.ok(!r.isError, JSON.stringify(r));
      if (r.empty) {
        const reason = r.deferred?.[0]?.reason;
        if (reason === 'window_exhausted' || reason === undefined) return claims;
        await new Promise((done) => setTimeout(done, 2 + Math.random() * 5));
        continue;
      }
      claims += 1;
      assert.ok(r.admission.used <= r.admission.max_claims_per_window, JSON.stringify(r.admission));
      await new Promise((done) => setTimeout(done, Math.random() * 8));
      const settle = ['complete', 'fail', 'release'][Math.floor(Math.random() * 3)] ?? 'complete';
      const settled = await call(c, settle, { id: r.todo.id });
      assert.ok(!settled.isError, `${settle}: ${JSON.stringify(settled)}`);
    }
  }

  test(`30 sessions on 3 instances racing a window of 50 commit exactly 50 claims, counted alike everywhere${mode}`, async () => {
    const queue = `window${batch}`;
    const { endpointId, sessions } = await arena(queue, 400, {
      max_claims_per_window: 50,
      window: { period: 'day', tz: 'America/Los_Angeles', start: startAwayFromNow('America/Los_Angeles', 'day') },
    });
    const wait = barrier(sessions.length);
    const claims = await Promise.all(sessions.map((c) => racer(c, queue, wait)));
    assert.equal(
      claims.reduce((a, b) => a + b, 0),
      50,
    );
    assert.equal(await windowUsed(pool, endpointId, queue), 50);
    assert.equal(await attemptRows(pool, endpointId, queue), 50);
    assert.equal(await claimedMetric(queue), 50);
  });

  test(`with max_in_flight = 3 the attempt intervals never show more than 3 claims at once${mode}`, async () => {
    const queue = `inflight${batch}`;
    const { endpointId, sessions } = await arena(queue, 400, {
      max_in_flight: 3,
      max_claims_per_window: 120,
      window: { period: 'hour', tz: 'Asia/Kathmandu', start: startAwayFromNow('Asia/Kathmandu', 'hour') },
    });
    const wait = barrier(sessions.length);
    const claims = await Promise.all(sessions.map((c) => racer(c, queue, wait)));
    assert.equal(
      claims.reduce((a, b) => a + b, 0),
      120,
    );
    assert.equal(await attemptRows(pool, endpointId, queue), 120);
    assert.equal(await windowUsed(pool, endpointId, queue), 120);
    const peak = await maxOverlap(endpointId);
    assert.ok(peak <= 3, `peak in flight ${peak}`);
    assert.equal(peak, 3, 'the race reached the cap');
  });

  test(`a policy write takes effect on the next claim on every instance, and deleting it restores the old path${mode}`, async () => {
    const queue = `switch${batch}`;
    const { sessions } = await arena(queue, 30, { max_in_flight: 0 });
    const one = [sessions[0], sessions[SESSIONS_PER_SERVER], sessions[2 * SESSIONS_PER_SERVER]] as Connected[];
    for (const c of one) {
      const r = await call(c, 'claim_next', { queue });
      assert.equal(r.deferred?.[0]?.reason, 'paused');
    }
    const owner = await pool.query<{ id: string; human_id: string }>(
      `SELECT e.id, e.human_id FROM endpoints e JOIN todos t ON t.endpoint_id = e.id WHERE t.queue = $1 LIMIT 1`,
      [queue],
    );
    const { id, human_id: humanId } = owner.rows[0] ?? { id: '', human_id: '' };
    await setPolicy({ db: pool }, { humanId, endpointId: null }, id, queue, { max_in_flight: 10 });
    for (const c of one) {
      const r = await call(c, 'claim_next', { queue });
      assert.equal(r.admission?.max_in_flight, 10, JSON.stringify(r));
    }
    await clearPolicy({ db: pool }, { humanId, endpointId: null }, id, queue);
    for (const c of one) {
      const r = await call(c, 'claim_next', { queue });
      assert.ok(r.todo && r.admission === undefined, JSON.stringify(r));
    }
  });
}
