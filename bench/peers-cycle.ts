// Where Switchboard's store-level claim → complete cycle goes, next to the peers'
// two-statement cycles: the same 16-worker drain, four ways, on one database, with the
// CPU each costs per cycle (this process, and PostgreSQL's backends). Not part of
// `npm run bench`; run it on its own:
//
//   SWITCHBOARD_BENCH_DATABASE_URL=… node --import tsx bench/peers-cycle.ts
//
// - usecase:  `switchboardRound` (bench/claim.ts): claimNext → complete through the use
//             cases — input parsing, the claim statement (which also acknowledges the
//             todo's doorbell rings), then the complete statement: 2 round trips.
// - store-2:  the same two store statements sent straight from a dedicated connection,
//             no use-case code: as many round trips as graphile-worker and pg-boss send.
// - floor:    the two bare statements of bench/claim.ts's floor, prepared, on a dedicated
//             connection: no attempt rows, no admission probe, summary-free answers.
// Rounds rotate the order; BENCH_TODOS (default 5,000) todos a drain, BENCH_ROUNDS (3).

import type pg from 'pg';
import { createPool, type Pool } from '../src/db/pool.js';
import * as claims from '../src/store/claims.js';
import { seedTodos, switchboardRound, timed, WORKERS } from './claim.js';
import { backendCpu, backendCpuUsed } from './cpu.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Drain = (pool: Pool, endpointId: string) => Promise<number>;

/** WORKERS dedicated connections each run `step` until it reports the queue empty. */
const onConnections = (pool: Pool, step: (c: pg.PoolClient, session: string) => Promise<boolean>) =>
  timed(
    Array.from({ length: WORKERS }, (_, w) => async () => {
      const client = await pool.connect();
      let n = 0;
      try {
        while (await step(client, `bench-${w}`)) n += 1;
      } finally {
        client.release();
      }
      return n;
    }),
    TODOS,
  );

const claimArgs = (endpointId: string, sessionId: string) => ({
  endpointId,
  queues: ['inbox'],
  sessionId,
  leaseSeconds: 300,
});
const claimedId = (rows: claims.ClaimRow[]) => (rows[0] && 'id' in rows[0] ? rows[0].id : null);

const DRAINS: Record<string, Drain> = {
  usecase: (pool, endpointId) => switchboardRound(pool, endpointId, TODOS),
  'store-2': (pool, endpointId) =>
    onConnections(pool, async (c, sessionId) => {
      const id = claimedId(await claims.claimNext(c, claimArgs(endpointId, sessionId)));
      if (!id) return false;
      await claims.complete(c, { endpointId, id, sessionId, result: { ok: true } });
      return true;
    }),
  floor: (pool, endpointId) =>
    onConnections(pool, async (c, sessionId) => {
      const claimed = await c.query<{ id: string }>({
        name: 'bench_floor_claim',
        text: `UPDATE todos SET state = 'claimed', owner_session_id = $2, lease_expires_at = now() + interval '5 minutes', ready_at = NULL
                WHERE (endpoint_id, id) = (SELECT endpoint_id, id FROM todos
                                            WHERE endpoint_id = $1 AND ready_at <= now() AND state = 'pending'
                                            ORDER BY (CASE WHEN state = 'pending' THEN priority ELSE -101 END) DESC, ready_at LIMIT 1 FOR UPDATE SKIP LOCKED)
               RETURNING id`,
        values: [endpointId, sessionId],
      });
      const id = claimed.rows[0]?.id;
      if (!id) return false;
      await c.query({
        name: 'bench_floor_done',
        text: `UPDATE todos SET state = 'done', result = $3::jsonb WHERE endpoint_id = $1 AND id = $2`,
        values: [endpointId, id, '{"ok":true}'],
      });
      return true;
    }),
};

const db = await benchDatabase();
const pool = createPool({ url: db.url, max: WORKERS });
try {
  process.stdout.write(`peers-cycle: ${WORKERS} workers, ${TODOS} todos a drain, ${ROUNDS} rounds, on ${db.server}\n`);
  const names = Object.keys(DRAINS);
  const results = new Map<string, Array<{ rate: number; clientMs: number; pgMs: number }>>();
  for (let round = -1; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + Math.max(round, 0)) % names.length] ?? 'usecase';
      const { endpointId } = await vendBenchEndpoint(pool);
      await seedTodos(pool, endpointId, TODOS);
      const backends = await backendCpu(pool);
      const client = process.cpuUsage();
      const rate = await (DRAINS[name] as Drain)(pool, endpointId);
      const used = process.cpuUsage(client);
      const pgSeconds = backendCpuUsed(backends, await backendCpu(pool));
      const r = {
        rate,
        clientMs: (used.user + used.system) / 1000 / TODOS,
        pgMs: pgSeconds === null ? NaN : (pgSeconds * 1000) / TODOS,
      };
      if (round < 0) continue; // warm-up
      results.set(name, [...(results.get(name) ?? []), r]);
      process.stdout.write(
        `  round ${round + 1} ${name.padEnd(9)} ${rate.toFixed(0)}/s, cpu ms/cycle: client ${r.clientMs.toFixed(3)}, ` +
          `postgres ${r.pgMs.toFixed(3)}\n`,
      );
    }
  }
  process.stdout.write('medians:\n');
  for (const name of names) {
    const rs = results.get(name) ?? [];
    const m = (k: 'rate' | 'clientMs' | 'pgMs') => median(rs.map((r) => r[k]));
    process.stdout.write(
      `  ${name.padEnd(9)} ${m('rate').toFixed(0)}/s, cpu ms/cycle: client ${m('clientMs').toFixed(3)}, ` +
        `postgres ${m('pgMs').toFixed(3)}, total ${(m('clientMs') + m('pgMs')).toFixed(3)}\n`,
    );
  }
} finally {
  await pool.end();
  await db.close();
}
