// The backlog benchmark (docs/design/scale.md): does the queue slow down when work piles
// up? Per size, a database and a `switchboard serve` child of its own on the one bench
// PostgreSQL server, and 16 MCP sessions with their notification streams open and read,
// each looping claim_next → complete, while two producers add a todo over MCP every
// ~20 ms (each rings a session). Measured at 10k, 100k and 1M pending todos of the
// endpoint, bulk-loaded in SQL; each size's rate ÷ the 10k rate (target ≥ 0.9 at 1M), with
// p50/p99 of claim_next and of push → doorbell (from the producer's create_todo call to
// the ring reaching any session's stream).
//
// The backlog is shaped as old work that has had all its rings: created by a human over
// the last days, ring budget used (ring_attempts 5, last rung long ago), ready since its
// creation. Beside each size's pending todos lie as many done ones (with their attempt
// rows), so the history grows with the backlog. Before each timed round the pending count
// is topped up to the size; rounds rotate over the sizes, each starting with another, so
// drift on a shared machine hits every size alike. After the rounds, at each size: the
// /metrics scrape and the board's queues page (the serve children run with
// SWITCHBOARD_AUTH=off, so the board is the synthetic admin's, who owns the endpoint),
// median of 5, ÷ the 10k figure (target ≤ 2×).
//
// BENCH_BACKLOG_SHAPE=pushed gives the backlog the shape users produce instead: the done
// history is loaded in SQL as above, but the pending todos arrive through the bulk API
// (requests of 1,000, as a user's script sends them) with the 16 sessions' streams already
// open, so every ring the doorbell makes then is really made and heard; the top-up before
// each round goes the same way, and nothing is vacuumed by hand. The figures add the push
// rate and the rings the sessions heard per pushed todo (docs/design/scale.md, "A pushed
// backlog").
//
// BENCH_BACKLOG_SIZES (default 10000,100000,1000000), BENCH_BACKLOG_SECONDS per round
// (default 8), BENCH_BACKLOG_ROUNDS (default 3); BENCH_BACKLOG_EXPLAIN=1 prints each size's
// claim plan.

import { loadavg } from 'node:os';
import { monotonicFactory } from 'ulid';
import { createPool, type Pool } from '../src/db/pool.js';
import { vendEndpoint } from '../src/endpoints/manage.js';
import { ensureHuman } from '../src/store/humans.js';
import { benchDatabase, claimStatementBuffers, median } from './db.js';
import { openSession, type BenchSession } from './mcp-client.js';
import { startServe, type ServeChild } from './serve.js';

const SIZES = (process.env.BENCH_BACKLOG_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_BACKLOG_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_BACKLOG_ROUNDS ?? 3);
const WORKERS = 16;
const PRODUCERS = 2;
const PRODUCE_EVERY_MS = 20;
const LOAD_BATCH = 50_000;
const SHAPE = process.env.BENCH_BACKLOG_SHAPE ?? 'rung';
if (SHAPE !== 'rung' && SHAPE !== 'pushed') throw new Error(`BENCH_BACKLOG_SHAPE is rung or pushed, not ${SHAPE}`);
const PUSH_BATCH = 1000;
/** The synthetic admin of SWITCHBOARD_AUTH=off (identity/setup.ts localAdmin). */
const LOCAL_ADMIN = 'hu_00000000000000000000000000';
const RATE_TARGET = 0.9;
const READ_TARGET = 2;

interface SizeFigures {
  size: number;
  rate: number;
  claim: number[];
  doorbell: number[];
  scrapeMs: number;
  boardMs: number;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const ulid = monotonicFactory();

/** Adds `count` rows in `state` ('pending' or 'done'), created over the past days, oldest first. */
async function load(pool: Pool, endpointId: string, state: 'pending' | 'done', count: number): Promise<void> {
  const start = Date.now() - 3 * 86_400_000;
  for (let from = 0; from < count; from += LOAD_BATCH) {
    const n = Math.min(LOAD_BATCH, count - from);
    const ids = Array.from({ length: n }, (_, i) => `td_${ulid(start + from + i)}`);
    await pool.query(
      `WITH rows AS (
         SELECT u.id, to_timestamp(($3::bigint + u.i) / 1000.0) AS at
           FROM unnest($4::text[]) WITH ORDINALITY u(id, i)),
       added AS (
         INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, attempt, claims, ready_at,
                            ring_attempts, last_ringed_at, completed_at, created_at, updated_at)
         SELECT $1, r.id, 'inbox', 'backlog', $2, $5, CASE WHEN $5 = 'done' THEN 1 ELSE 0 END,
                CASE WHEN $5 = 'done' THEN 1 ELSE 0 END, CASE WHEN $5 = 'pending' THEN r.at END, 5,
                r.at + interval '6 hours', CASE WHEN $5 = 'done' THEN r.at END, r.at, r.at
           FROM rows r
         RETURNING endpoint_id, id, state, created_at)
       INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at,
                                  ended_at, outcome)
       SELECT endpoint_id, id, 1, 1, 'ms_bench', created_at, created_at + interval '5 minutes', created_at, 'completed'
         FROM added WHERE state = 'done'`,
      [endpointId, LOCAL_ADMIN, start + from, ids, state],
    );
  }
}

async function pendingOf(pool: Pool, endpointId: string): Promise<number> {
  const res = await pool.query<{ n: number }>(`SELECT todo_count($1, 'inbox', 'pending')::int AS n`, [endpointId]);
  return res.rows[0]?.n ?? 0;
}

/** Loads the done history to `size`, and (the rung shape) the pending backlog too. */
async function grow(pool: Pool, endpointId: string, size: number): Promise<void> {
  const done = await pool.query<{ n: number }>(`SELECT todo_count($1, 'inbox', 'done')::int AS n`, [endpointId]);
  const t0 = Date.now();
  await load(pool, endpointId, 'done', size - (done.rows[0]?.n ?? 0));
  if (SHAPE === 'rung') await load(pool, endpointId, 'pending', size - (await pendingOf(pool, endpointId)));
  await pool.query('VACUUM ANALYZE todos');
  await pool.query('VACUUM ANALYZE todo_attempts');
  await pool.query('CHECKPOINT');
  const what = SHAPE === 'rung' ? `${size} pending + ${size} done` : `${size} done`;
  process.stdout.write(`  loaded to ${what} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

/** The pushed shape: `count` todos through the bulk API, requests of 1,000, one after another. */
async function push(side: Side, count: number, label: string): Promise<void> {
  const t0 = performance.now();
  const heard = side.heard;
  for (let from = 0; from < count; from += PUSH_BATCH) {
    const todos = Array.from({ length: Math.min(PUSH_BATCH, count - from) }, (_, i) => ({
      queue: 'inbox',
      title: `${label} ${from + i}`,
      payload: { n: from + i, source: 'bench' },
    }));
    const res = await fetch(`${side.serve.url}/api/v1/endpoints/${side.slug}/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ todos }),
    });
    const answer = (await res.json()) as { created?: number };
    if (res.status !== 201 || answer.created !== todos.length) {
      throw new Error(`bulk request answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  side.pushedTodos += count;
  if (count >= 10_000)
    process.stdout.write(
      `  pushed ${count} todos to the ${side.size} side in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(0)}/s);` +
        ` the sessions heard ${side.heard - heard} rings meanwhile\n`,
    );
}

/** How long one GET takes, median of 5 after a warm-up. */
async function timedGet(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    const res = await fetch(url);
    await res.text();
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    if (i > 0) times.push(performance.now() - t0);
  }
  return median(times);
}

/** One timed round: workers cycle, producers push; the cycles, claim and ring latencies. */
async function round(
  workers: BenchSession[],
  producers: BenchSession[],
  pushed: Map<string, number>,
  rings: number[],
): Promise<{ cycles: number; claim: number[] }> {
  const claim: number[] = [];
  const until = Date.now() + SECONDS * 1000;
  let cycles = 0;
  const work = workers.map(async (w) => {
    while (Date.now() < until) {
      const t0 = performance.now();
      const r = await w.call('claim_next', {});
      claim.push(performance.now() - t0);
      const todo = r.todo as { id: string } | undefined;
      if (!todo) throw new Error('the backlog ran empty during the measurement');
      await w.call('complete', { id: todo.id });
      cycles += 1;
    }
  });
  const produce = producers.map(async (p, i) => {
    let n = 0;
    while (Date.now() < until) {
      const t0 = performance.now();
      const r = await p.call('create_todo', { queue: 'inbox', title: `pushed ${i}-${n++}` });
      pushed.set((r.todo as { id: string }).id, t0);
      await new Promise((resolve) => setTimeout(resolve, PRODUCE_EVERY_MS));
    }
  });
  rings.length = 0;
  await Promise.all([...work, ...produce]);
  return { cycles, claim };
}

/** One size's own database, serve child and sessions; its figures accumulate over the rounds. */
interface Side {
  size: number;
  pool: Pool;
  serve: ServeChild;
  endpointId: string;
  slug: string;
  /** Every ring the workers heard, and the todos pushed through the API (pushed shape). */
  heard: number;
  pushedTodos: number;
  workers: BenchSession[];
  producers: BenchSession[];
  pushed: Map<string, number>;
  rings: number[];
  cycles: number;
  claim: number[];
  doorbell: number[];
}

async function openSide(url: string, size: number): Promise<Side> {
  const pool = createPool({ url, max: 4 });
  await ensureHuman(pool, { id: LOCAL_ADMIN, email: 'admin@localhost', displayName: 'bench', role: 'admin' });
  const vended = await vendEndpoint(
    { db: pool, publicUrl: 'http://bench.test' },
    LOCAL_ADMIN,
    { name: 'backlog', verbs: ['drain', 'create'] },
    new Date(),
  );
  await grow(pool, vended.endpoint.id, size);
  const serve = await startServe(url, { SWITCHBOARD_AUTH: 'off' });
  const side: Side = {
    size,
    pool,
    serve,
    endpointId: vended.endpoint.id,
    slug: vended.endpoint.slug,
    heard: 0,
    pushedTodos: 0,
    workers: [],
    producers: [],
    pushed: new Map(),
    rings: [],
    cycles: 0,
    claim: [],
    doorbell: [],
  };
  const onRing = (meta: Record<string, string>) => {
    side.heard += 1;
    const sent = meta.todo_id ? side.pushed.get(meta.todo_id) : undefined;
    if (meta.todo_id && sent !== undefined) {
      side.rings.push(performance.now() - sent);
      side.pushed.delete(meta.todo_id);
    }
  };
  for (let i = 0; i < WORKERS; i++) side.workers.push(await openSession('raw', serve.url, vended.credential, onRing));
  for (let i = 0; i < PRODUCERS; i++) side.producers.push(await openSession('raw', serve.url, vended.credential));
  if (SHAPE === 'pushed') await push(side, size - (await pendingOf(pool, side.endpointId)), 'backlog');
  return side;
}

async function closeSide(side: Side): Promise<void> {
  for (const s of [...side.workers, ...side.producers]) await s.end().catch(() => undefined);
  await side.serve.stop();
  await side.pool.end();
}

/** Tops the side up to its size and runs one timed round on it. */
async function roundOf(side: Side): Promise<void> {
  const missing = side.size - (await pendingOf(side.pool, side.endpointId));
  if (SHAPE === 'pushed') await push(side, missing, 'top-up');
  else await load(side.pool, side.endpointId, 'pending', missing);
  const result = await round(side.workers, side.producers, side.pushed, side.rings);
  side.cycles += result.cycles;
  side.claim.push(...result.claim);
  side.doorbell.push(...side.rings);
}

async function report(side: Side): Promise<SizeFigures> {
  const buffers = await claimStatementBuffers(side.pool, side.endpointId, process.env.BENCH_BACKLOG_EXPLAIN === '1');
  const table = await side.pool.query<{ dead: number; vacuums: number }>(
    `SELECT n_dead_tup AS dead, autovacuum_count AS vacuums FROM pg_stat_user_tables WHERE relname = 'todos'`,
  );
  const f: SizeFigures = {
    size: side.size,
    rate: side.cycles / (ROUNDS * SECONDS),
    claim: side.claim,
    doorbell: side.doorbell,
    scrapeMs: await timedGet(`${side.serve.url}/metrics`),
    boardMs: await timedGet(`${side.serve.url}/`),
  };
  // One ring per idle agent: while every session is busy cycling, a producer's todo rings nobody.
  const doorbell =
    f.doorbell.length === 0
      ? 'push → doorbell: no producer todo rung (no session idle)'
      : `push → doorbell p50 ${percentile(f.doorbell, 50).toFixed(2)} ms p99 ${percentile(f.doorbell, 99).toFixed(2)} ms (${f.doorbell.length} rings)`;
  process.stdout.write(
    `  ${f.size} pending: ${f.rate.toFixed(0)} cycles/s; claim_next p50 ${percentile(f.claim, 50).toFixed(2)} ms` +
      ` p99 ${percentile(f.claim, 99).toFixed(2)} ms; ${doorbell}; /metrics ${f.scrapeMs.toFixed(1)} ms;` +
      ` board ${f.boardMs.toFixed(1)} ms; the claim statement touches ${buffers} buffers; todos has` +
      ` ${table.rows[0]?.dead} dead tuples after ${table.rows[0]?.vacuums} autovacuums` +
      (SHAPE === 'pushed'
        ? `; ${side.heard} rings heard over the run for ${side.pushedTodos} todos pushed (${(side.heard / side.pushedTodos).toFixed(4)} a todo)`
        : '') +
      '\n',
  );
  return f;
}

function compare(base: SizeFigures, f: SizeFigures): void {
  const rate = f.rate / base.rate;
  const scrape = f.scrapeMs / base.scrapeMs;
  const board = f.boardMs / base.boardMs;
  const ratio = (a: number[], b: number[], p: number) => (percentile(a, p) / percentile(b, p)).toFixed(2);
  process.stdout.write(
    `  ${f.size} ÷ ${base.size}: rate ${rate.toFixed(3)} (target ≥ ${RATE_TARGET}: ${rate >= RATE_TARGET ? 'met' : 'NOT met'});` +
      ` claim_next p50 ${ratio(f.claim, base.claim, 50)}× p99 ${ratio(f.claim, base.claim, 99)}×;` +
      (f.doorbell.length > 0 && base.doorbell.length > 0
        ? ` doorbell p50 ${ratio(f.doorbell, base.doorbell, 50)}× p99 ${ratio(f.doorbell, base.doorbell, 99)}×;`
        : '') +
      ` /metrics ${scrape.toFixed(2)}×, board ${board.toFixed(2)}× (target ≤ ${READ_TARGET}×:` +
      ` ${scrape <= READ_TARGET && board <= READ_TARGET ? 'met' : 'NOT met'})\n`,
  );
}

/**
 * Each size has a database and a serve child of its own on the same PostgreSQL server, so
 * the 10k figure comes from a table that really holds 10k; rounds rotate over the sizes
 * (each round starting with another), so drift on a shared machine hits every size alike.
 */
export async function runBacklogBench(): Promise<void> {
  const db = await benchDatabase();
  const sides: Side[] = [];
  try {
    process.stdout.write(
      `backlog bench (${SHAPE} shape): ${WORKERS} streaming sessions cycling, ${PRODUCERS} producers every ${PRODUCE_EVERY_MS} ms,` +
        ` ${ROUNDS} × ${SECONDS} s per size, rounds rotating over the sizes, on ${db.server}\n`,
    );
    for (const [i, size] of SIZES.entries()) sides.push(await openSide(i === 0 ? db.url : await db.sibling(), size));
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < sides.length; k++) await roundOf(sides[(r + k) % sides.length]!);
      process.stdout.write(`  round ${r + 1} of ${ROUNDS} done; load ${loadavg()[0]?.toFixed(2)}\n`);
    }
    const figures: SizeFigures[] = [];
    for (const side of sides) figures.push(await report(side));
    const base = figures[0];
    if (base) for (const f of figures.slice(1)) compare(base, f);
  } finally {
    for (const side of sides) await closeSide(side);
    await db.close();
  }
}
