// claim_next → complete over MCP against the same loop through the store, on one database
// in one run.
//
// MCP: a `serve` child process (bench/serve.ts) on the bench database; 16 clients in this
// process (bench/mcp-client.ts: bare fetch by default, the SDK's Client with
// BENCH_MCP_CLIENT=sdk), each its own session on one endpoint holding its notification
// stream, loop claim_next → complete until the queue answers empty. Sessions are connected
// before the clock starts. Every request pays what a real agent's does: HTTP, the bearer
// and session lookup, the verb, the JSON-RPC answer.
// Store: bench/claim.ts's switchboardRound — 16 workers looping claimNext → complete
// through the todo use cases in this process — on an endpoint seeded the same way.
// Floor: bench/claim.ts's floorRound — 16 connections looping the two bare statements
// (a SKIP LOCKED claim, an update to done) — on an endpoint seeded the same way.
// Rounds alternate which goes first; the ratios are the medians of per-round ratios.
// Target: MCP ≥ 0.5 of the bare two-statement floor (issue 37), and ≥ 0.5 of the
// store-level rate. Then the create section (bench/mcp-create.ts) on the same serve child:
// MCP create_todo against a bare INSERT, target ≥ 0.5 (BENCH_MCP_CREATES=off skips it). Each round is also charged the CPU that this
// process, the serve child and PostgreSQL's backends spent on it (bench/cpu.ts), which a
// shared machine disturbs far less than it disturbs the rates.

import { createPool, type Pool } from '../src/db/pool.js';
import { floorRound, seedTodos, switchboardRound, timed, WORKERS } from './claim.js';
import { charged, type Round } from './cpu.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { createSection, describeCreates } from './mcp-create.js';
import { openSession, type ClientKind } from './mcp-client.js';
import { startServe, type ServeChild } from './serve.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Which client drives the MCP side (bench/mcp-client.ts): `raw` (default) or `sdk`. */
const CLIENT: ClientKind = process.env.BENCH_MCP_CLIENT === 'sdk' ? 'sdk' : 'raw';
/** Todos in the unmeasured warm-up round of each side: enough to JIT both paths. */
const WARM_UP_TODOS = 2_000;
/**
 * The server gets as many connections as the store-level side has workers, so neither
 * queues for a connection the other has; the production default (10) is a separate question.
 */
const SERVER_POOL = String(WORKERS);

interface Vended {
  endpointId: string;
  credential: string;
}

async function vendWithTodos(pool: Pool, todos: number): Promise<Vended> {
  const { endpointId, credential } = await vendBenchEndpoint(pool);
  await seedTodos(pool, endpointId, todos);
  return { endpointId, credential };
}

async function mcpRound(pool: Pool, serve: ServeChild, vended: Vended, todos: number): Promise<Round> {
  const sessions = await Promise.all(
    Array.from({ length: WORKERS }, () => openSession(CLIENT, serve.url, vended.credential)),
  );
  try {
    return await charged(pool, serve, todos, () =>
      timed(
        sessions.map((session) => async () => {
          let n = 0;
          for (;;) {
            const claimed = await session.call('claim_next', {});
            const todo = claimed.todo as { id: string } | undefined;
            if (!todo) return n;
            await session.call('complete', { id: todo.id, result: { ok: true } });
            n += 1;
          }
        }),
        todos,
      ),
    );
  } finally {
    await Promise.all(sessions.map((s) => s.end()));
  }
}

const ms = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : value.toFixed(2));
const describe = (r: Round | undefined) =>
  `${r?.rate.toFixed(0)}/s (cpu ms/cycle: bench ${ms(r?.benchMs)}, serve ${ms(r?.serveMs)}, ` +
  `postgres ${ms(r?.postgresMs)})`;

/**
 * The median over rounds of store-side ÷ MCP-side server CPU per cycle: the rate ratio the
 * two would show if both were bound by the same CPU, which a busy shared machine does not
 * disturb the way it disturbs rates. The store side's workers run in this process, the MCP
 * side's in serve; PostgreSQL's backends count on both. n/a when PostgreSQL is not local.
 */
function cpuRatio(base: Round[], over: Round[]): string {
  const ratios: number[] = [];
  for (const [i, m] of over.entries()) {
    const b = base[i];
    if (!b || b.postgresMs === null || m.postgresMs === null) return 'n/a';
    ratios.push((b.benchMs + b.postgresMs) / (m.serveMs + m.postgresMs));
  }
  return median(ratios).toFixed(3);
}

export async function runMcpBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  const serve = await startServe(db.url, { SWITCHBOARD_DB_POOL_SIZE: SERVER_POOL });
  try {
    process.stdout.write(
      `mcp bench: ${WORKERS} sessions (${CLIENT} client), ${TODOS} todos a round, ${ROUNDS} rounds each, ` +
        `serve child pid ${serve.pid} (pool ${SERVER_POOL}), on ${db.server}\n`,
    );
    const store = async (todos = TODOS) => {
      const { endpointId } = await vendWithTodos(pool, todos);
      return charged(pool, serve, todos, () => switchboardRound(pool, endpointId, todos));
    };
    const mcp = async (todos = TODOS) => mcpRound(pool, serve, await vendWithTodos(pool, todos), todos);
    const bare = async (todos = TODOS) => floorRound(pool, (await vendWithTodos(pool, todos)).endpointId, todos);
    // Warm-up: connections, prepared statements and JIT on every side, not measured.
    await bare(WARM_UP_TODOS);
    await store(WARM_UP_TODOS);
    await mcp(WARM_UP_TODOS);
    const floor: number[] = [];
    const base: Round[] = [];
    const over: Round[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate the order, so a trend in the machine favours none.
      if (round % 2) {
        floor.push(await bare());
        base.push(await store());
        over.push(await mcp());
      } else {
        over.push(await mcp());
        base.push(await store());
        floor.push(await bare());
      }
      const m = over.at(-1)?.rate ?? 0;
      process.stdout.write(
        `  round ${round}: floor ${floor.at(-1)?.toFixed(0)}/s, store ${describe(base.at(-1))}, ` +
          `mcp ${describe(over.at(-1))}, mcp÷floor ${(m / (floor.at(-1) ?? 1)).toFixed(3)}, ` +
          `mcp÷store ${(m / (base.at(-1)?.rate ?? 1)).toFixed(3)}\n`,
      );
    }
    const ratio = median(over.map((m, i) => m.rate / (base[i]?.rate ?? m.rate)));
    const floorRatio = median(over.map((m, i) => m.rate / (floor[i] ?? m.rate)));
    process.stdout.write(
      `floor (2 bare statements)      ${median(floor).toFixed(0)} cycles/s\n` +
        `store claimNext→complete       ${median(base.map((r) => r.rate)).toFixed(0)} cycles/s\n` +
        `mcp claim_next→complete        ${median(over.map((r) => r.rate)).toFixed(0)} cycles/s\n` +
        `mcp ÷ bare two-statement floor ${floorRatio.toFixed(3)} (target ≥ 0.5)\n` +
        `mcp ÷ store                    ${ratio.toFixed(3)} (target ≥ 0.5)\n` +
        `server-side cpu/cycle ratio    ${cpuRatio(base, over)} (store: workers + postgres; mcp: serve + postgres)\n`,
    );
    if (process.env.BENCH_MCP_CREATES !== 'off') {
      process.stdout.write(describeCreates(await createSection(pool, serve, CLIENT)));
    }
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
