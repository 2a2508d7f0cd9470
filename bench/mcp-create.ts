// create_todo over MCP against a bare INSERT, on one database in one run.
//
// MCP: the serve child (bench/serve.ts); 16 raw sessions (bench/mcp-client.ts) of one
// endpoint each loop `create_todo` until the round's count is made — validation, the
// grant check, the live-todo quota read, the insert (coalesced with the other sessions'
// inserts, docs/design/coalescing.md "Creates") and its todo_ready, the JSON-RPC answer.
// Floor: 16 connections of this process each loop one bare autocommit INSERT of a ready
// todo into the same table, no application logic, no notice.
// Rounds alternate which goes first; the ratio is the median of per-round ratios.
// Target: MCP ≥ 0.5 of the floor. bench/mcp.ts runs this section after the claim cycle's,
// on the same serve child; `npm run bench -- mcp-create` runs it alone.

import { createPool, type Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { timed, WORKERS } from './claim.js';
import { charged, type Round } from './cpu.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { openSession, type ClientKind } from './mcp-client.js';
import { startServe, type ServeChild } from './serve.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_CREATES = 2_000;

/** Splits `total` calls over the workers: each loops until the shared count is spent. */
function shared(total: number) {
  let left = total;
  return () => (left > 0 ? (left--, true) : false);
}

const FLOOR_INSERT = `INSERT INTO todos (endpoint_id, id, queue, title, ready_at) VALUES ($1, $2, 'inbox', $3, now())`;

/** One floor round: WORKERS connections loop a bare INSERT until `creates` are made. */
export async function insertFloorRound(pool: Pool, endpointId: string, creates: number): Promise<number> {
  const take = shared(creates);
  return timed(
    Array.from({ length: WORKERS }, () => async () => {
      let n = 0;
      while (take()) {
        await pool.query(FLOOR_INSERT, [endpointId, newId('td'), `floor ${n}`]);
        n += 1;
      }
      return n;
    }),
    creates,
  );
}

/** One MCP round: WORKERS sessions loop create_todo until `creates` are made. */
export async function mcpCreateRound(url: string, credential: string, creates: number, kind: ClientKind) {
  const sessions = await Promise.all(Array.from({ length: WORKERS }, () => openSession(kind, url, credential)));
  try {
    const take = shared(creates);
    return await timed(
      sessions.map((session) => async () => {
        let n = 0;
        while (take()) {
          const made = await session.call('create_todo', { queue: 'inbox', title: `mcp ${n}` });
          if (!(made.todo as { id?: string } | undefined)?.id) throw new Error('create_todo answered no todo');
          n += 1;
        }
        return n;
      }),
      creates,
    );
  } finally {
    await Promise.all(sessions.map((s) => s.end()));
  }
}

export interface CreateRound {
  floor: Round;
  mcp: Round;
}

const ms = (v: number | null) => (v === null ? '-' : v.toFixed(3));
const cpu = (r: Round) => `cpu ms/todo: bench ${ms(r.benchMs)}, serve ${ms(r.serveMs)}, postgres ${ms(r.postgresMs)}`;

/** The create section: a warm-up of each, then `rounds` rounds alternating which goes first. */
export async function createSection(
  pool: Pool,
  serve: ServeChild,
  kind: ClientKind,
  rounds = ROUNDS,
  creates = CREATES,
): Promise<CreateRound[]> {
  const floor = async (n = creates) => {
    const { endpointId } = await vendBenchEndpoint(pool);
    return charged(pool, serve, n, () => insertFloorRound(pool, endpointId, n));
  };
  const mcp = async (n = creates) => {
    const { credential } = await vendBenchEndpoint(pool);
    return charged(pool, serve, n, () => mcpCreateRound(serve.url, credential, n, kind));
  };
  await floor(WARM_UP_CREATES);
  await mcp(WARM_UP_CREATES);
  const out: CreateRound[] = [];
  for (let round = 1; round <= rounds; round++) {
    let f: Round;
    let m: Round;
    if (round % 2) {
      f = await floor();
      m = await mcp();
    } else {
      m = await mcp();
      f = await floor();
    }
    out.push({ floor: f, mcp: m });
    process.stdout.write(
      `  create round ${round}: bare INSERT ${f.rate.toFixed(0)}/s (${cpu(f)}), ` +
        `mcp create_todo ${m.rate.toFixed(0)}/s (${cpu(m)}), ratio ${(m.rate / f.rate).toFixed(3)}\n`,
    );
  }
  return out;
}

export function describeCreates(rounds: CreateRound[]): string {
  const ratio = median(rounds.map((r) => r.mcp.rate / r.floor.rate));
  return (
    `floor: bare INSERT              ${median(rounds.map((r) => r.floor.rate)).toFixed(0)} todos/s\n` +
    `mcp create_todo                 ${median(rounds.map((r) => r.mcp.rate)).toFixed(0)} todos/s\n` +
    `mcp create ÷ bare INSERT        ${ratio.toFixed(3)} (target ≥ 0.5)\n`
  );
}

export async function runMcpCreateBench(): Promise<void> {
  const kind: ClientKind = process.env.BENCH_MCP_CLIENT === 'sdk' ? 'sdk' : 'raw';
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  const serve = await startServe(db.url, { SWITCHBOARD_DB_POOL_SIZE: String(WORKERS) });
  try {
    process.stdout.write(
      `mcp-create bench: ${WORKERS} sessions (${kind} client), ${CREATES} creates a round, ${ROUNDS} rounds, ` +
        `serve child pid ${serve.pid}, on ${db.server}\n`,
    );
    process.stdout.write(describeCreates(await createSection(pool, serve, kind)));
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
