// Store-level claim → complete throughput against its floor, on one database in one run.
//
// Switchboard: 16 workers each loop claim_next → complete through the todo use cases
// (validation, lease resolution, attempt rows, one statement per verb).
// Floor: 16 workers each loop two bare statements on the same table — a FOR UPDATE SKIP
// LOCKED claim and an update to done — with no application logic and no attempt rows.
// Rounds alternate floor and Switchboard so drift in the machine hits both alike; the
// medians are printed with the ratio: the median of each round's ratio (a floor run and
// a Switchboard run back to back see the same machine state, so per-round ratios cancel
// most of the drift that checkpoints and autovacuum add). Target: ratio ≥ 0.85.

import { coalescing } from '../src/todos/coalesce.js';
import { randomBytes } from 'node:crypto';
import { createPool, type Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { insertEndpoint } from '../src/store/endpoints.js';
import { insertHuman } from '../src/store/humans.js';
import { claimNext, complete, type Agent } from '../src/todos/index.js';
import { benchDatabase, median } from './db.js';

export const WORKERS = 16;
export const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

export async function freshEndpoint(pool: Pool, todos = TODOS, mixedPriorities = false): Promise<string> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `bench-${tag}@example.test`,
    displayName: tag,
    role: 'admin',
  });
  const endpoint = await insertEndpoint(pool, {
    id: newId('ep'),
    humanId: human.id,
    name: `bench-${tag}`,
    slug: `bench-${tag}`,
    queues: ['inbox'],
    verbs: [],
    defaultLeaseSeconds: null,
    expiresAt: null,
  });
  await seedTodos(pool, endpoint.id, todos, mixedPriorities);
  return endpoint.id;
}

/**
 * `todos` pending todos on the endpoint's `inbox` queue, all ready now; then the table is
 * vacuumed. With `mixedPriorities` they are spread over five priorities (-20 to 20),
 * interleaved, so claims jump between priorities as they go.
 */
export async function seedTodos(pool: Pool, endpointId: string, todos: number, mixedPriorities = false): Promise<void> {
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, priority, ready_at)
     SELECT $1, 'td_' || lpad(g::text, 26, '0'), 'inbox', 'bench ' || g,
            CASE WHEN $3::boolean THEN (g * 7919 % 5) * 10 - 20 ELSE 0 END, now()
       FROM generate_series(1, $2) g`,
    [endpointId, todos, mixedPriorities],
  );
  await pool.query('VACUUM ANALYZE todos');
}

export async function timed(workers: Array<() => Promise<number>>, expected = TODOS): Promise<number> {
  const started = process.hrtime.bigint();
  const counts = await Promise.all(workers.map((w) => w()));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== expected) throw new Error(`expected ${expected} cycles, got ${total}`);
  return total / seconds;
}

/**
 * One store-level round: WORKERS sessions loop claimNext → complete through the use cases
 * until empty, coalescing as `serve` does (SWITCHBOARD_COALESCE_MAX_BATCH, default 32; 1 is
 * the uncoalesced path).
 */
export async function switchboardRound(
  pool: Pool,
  endpointId: string,
  todos: number,
  maxBatch = Number(process.env.SWITCHBOARD_COALESCE_MAX_BATCH ?? 32),
): Promise<number> {
  const deps = { db: pool, defaultLeaseSeconds: 300, coalesce: coalescing(pool, { maxBatch }) };
  return timed(
    Array.from({ length: WORKERS }, (_, w) => async () => {
      const agent: Agent = { endpointId, sessionId: `bench-${w}`, queues: ['inbox'], defaultLeaseSeconds: null };
      let n = 0;
      for (;;) {
        const r = await claimNext(deps, agent, {});
        if (!('todo' in r)) return n;
        await complete(deps, agent, { id: r.todo.id, result: { ok: true } });
        n += 1;
      }
    }),
    todos,
  );
}

const FLOOR_CLAIM = `
  UPDATE todos SET state = 'claimed', owner_session_id = $2, lease_expires_at = now() + interval '5 minutes', ready_at = NULL
   WHERE (endpoint_id, id) = (SELECT endpoint_id, id FROM todos
                               WHERE endpoint_id = $1 AND ready_at <= now() AND state = 'pending'
                               ORDER BY (CASE WHEN state = 'pending' THEN priority ELSE -101 END) DESC, ready_at LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id`;
const FLOOR_DONE = `UPDATE todos SET state = 'done', result = $3::jsonb WHERE endpoint_id = $1 AND id = $2`;

/** One floor round: WORKERS connections loop the two bare statements (claim, done) until empty. */
export async function floorRound(pool: Pool, endpointId: string, todos: number): Promise<number> {
  return timed(
    Array.from({ length: WORKERS }, (_, w) => async () => {
      let n = 0;
      for (;;) {
        const claimed = await pool.query<{ id: string }>(FLOOR_CLAIM, [endpointId, `floor-${w}`]);
        const id = claimed.rows[0]?.id;
        if (!id) return n;
        await pool.query(FLOOR_DONE, [endpointId, id, '{"ok":true}']);
        n += 1;
      }
    }),
    todos,
  );
}

export async function runClaimBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  try {
    process.stdout.write(
      `claim bench: ${WORKERS} workers, ${TODOS} todos a round, ${ROUNDS} rounds each, on ${db.server}\n`,
    );
    type Round = (pool: Pool, endpointId: string, todos: number) => Promise<number>;
    const run = async (round: Round, todos = TODOS) => round(pool, await freshEndpoint(pool, todos), todos);
    // Warm-up: connections, prepared statements and JIT for both, not measured.
    await run(floorRound, 2_000);
    await run(switchboardRound, 2_000);
    const floor: number[] = [];
    const mine: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so a trend in the machine favours neither.
      if (round % 2) {
        floor.push(await run(floorRound));
        mine.push(await run(switchboardRound));
      } else {
        mine.push(await run(switchboardRound));
        floor.push(await run(floorRound));
      }
      process.stdout.write(
        `  round ${round}: floor ${floor.at(-1)?.toFixed(0)}/s, switchboard ${mine.at(-1)?.toFixed(0)}/s, ` +
          `ratio ${((mine.at(-1) ?? 0) / (floor.at(-1) ?? 1)).toFixed(3)}\n`,
      );
    }
    const ratio = median(mine.map((m, i) => m / (floor[i] ?? m)));
    process.stdout.write(
      `floor (2 bare statements)   ${median(floor).toFixed(0)} cycles/s\n` +
        `switchboard claim→complete  ${median(mine).toFixed(0)} cycles/s\n` +
        `ratio                       ${ratio.toFixed(3)} (target ≥ 0.85)\n`,
    );
  } finally {
    await pool.end();
    await db.close();
  }
}
