// claim_next latency with 10,000 and with 1,000,000 pending todos on one endpoint, in one
// run on one PostgreSQL server.
//
// Each size has a database of its own on the same server (benchDatabase twice), so the
// 10k figure comes from a table that really holds 10k todos. Rows are bulk-loaded
// straight into `todos`, shaped as the create use case writes them (store/todos.ts
// insertTodo): a `td_` ULID minted for the row's creation instant, queue `inbox`, a
// title, empty body, created by a human, max_attempts 5, and ready_at = created_at =
// updated_at, one millisecond apart, oldest first. Then VACUUM ANALYZE.
//
// Measurement: claims through the use case (todos/claim.ts claimNext: input parsing, the
// claim statement inside its transaction with the doorbell acknowledgement), each
// followed by complete; only claimNext is timed. Rounds alternate the two sizes (and
// which goes first), so drift in a shared machine hits both alike; in each round, per
// size: top up to the size, a warm-up, BENCH_SCALE_CLAIMS ÷ rounds claims by one worker
// (the latency figure), then as many by 16 workers (a loaded figure). p50/p99 are over
// all rounds' samples of a size; the ratio is 1M ÷ 10k of those. Target: the one-worker
// 1M p50 and p99 within 1.5× of 10k's.
//
// Also printed: PostgreSQL's CPU per cycle at each size (bench/cpu.ts, from /proc), the
// shared buffers one claim statement touches at each size (EXPLAIN
// (ANALYZE, BUFFERS), rolled back; a count, so no noise), and the cost at each size of
// the reads that scan by table size: the metrics scrape's queue collectors and the
// board's lane reads (per scrape and per board poll, never per claim).

import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { monotonicFactory } from 'ulid';
import { createPool, type Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { laneCards, laneCounts, liveFingerprint } from '../src/store/board-lanes.js';
import { insertEndpoint } from '../src/store/endpoints.js';
import { insertHuman } from '../src/store/humans.js';
import { oldestPendingAges, queueStateCounts } from '../src/store/queue-stats.js';
import { claimNext, complete, type Agent } from '../src/todos/index.js';
import { backendCpu, backendCpuUsed } from './cpu.js';
import { benchDatabase, claimStatementBuffers, median, type BenchDatabase } from './db.js';

const SMALL = Number(process.env.BENCH_SCALE_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_SCALE_LARGE ?? 1_000_000);
/** Timed claims per size and worker count, spread over the rounds. */
const CLAIMS = Number(process.env.BENCH_SCALE_CLAIMS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 4);
/** Unmeasured claims before each timed batch. */
const WARM_UP = Number(process.env.BENCH_SCALE_WARM_UP ?? 100);
const WORKERS = 16;
/** Rows per INSERT of the bulk load. */
const BATCH = 50_000;
const TARGET = 1.5;

interface Bench {
  pool: Pool;
  humanId: string;
}

async function newEndpoint(b: Bench): Promise<string> {
  const tag = randomBytes(4).toString('hex');
  const endpoint = await insertEndpoint(b.pool, {
    id: newId('ep'),
    humanId: b.humanId,
    name: `scale-${tag}`,
    slug: `scale-${tag}`,
    queues: ['inbox'],
    verbs: [],
    defaultLeaseSeconds: null,
    expiresAt: null,
  });
  return endpoint.id;
}

/**
 * `count` pending todos on the endpoint's inbox, created one millisecond apart and ending
 * now (so the oldest is claimed first, and every row is ready), with ids minted for each
 * row's instant as newId('td') would have minted them.
 */
async function load(b: Bench, endpointId: string, count: number): Promise<void> {
  const ulid = monotonicFactory();
  const { rows } = await b.pool.query<{ now: Date }>('SELECT now()');
  const end = (rows[0]?.now ?? new Date()).getTime();
  const start = end - count;
  for (let from = 0; from < count; from += BATCH) {
    const ids: string[] = [];
    const offsets: number[] = [];
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      ids.push(`td_${ulid(start + i)}`);
      offsets.push(i);
    }
    await b.pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, body, payload, kind, source, created_by_human_id,
         created_by_endpoint_id, idempotency_key, max_attempts, ready_at, created_at, updated_at)
       SELECT $1, r.id, 'inbox', 'scale ' || r.i, '', NULL, NULL, NULL, $2, NULL, NULL, 5, r.at, r.at, r.at
         FROM (SELECT u.id, u.i, to_timestamp(($3::bigint + u.i) / 1000.0) AS at
                 FROM unnest($4::text[], $5::int[]) AS u(id, i)) r`,
      [endpointId, b.humanId, start, ids, offsets],
    );
  }
}

async function pendingOf(b: Bench, endpointId: string): Promise<number> {
  const { rows } = await b.pool.query<{ n: number }>(
    `SELECT count(*) AS n FROM todos WHERE endpoint_id = $1 AND state = 'pending'`,
    [endpointId],
  );
  return rows[0]?.n ?? 0;
}

/** Brings the endpoint back to `size` pending todos (new ones at the back of the queue). */
async function topUp(b: Bench, endpointId: string, size: number): Promise<void> {
  const missing = size - (await pendingOf(b, endpointId));
  if (missing > 0) await load(b, endpointId, missing);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

interface Latency {
  p50: number;
  p99: number;
  n: number;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, c) => a - c);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length };
}

/** `claims` claimNext → complete cycles over `workers` workers; the claimNext latencies in ms. */
async function cycles(b: Bench, endpointId: string, claims: number, workers: number): Promise<number[]> {
  const deps = { db: b.pool, defaultLeaseSeconds: 300 };
  const samples: number[] = [];
  let left = claims;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const agent: Agent = { endpointId, sessionId: `scale-${w}`, queues: ['inbox'], defaultLeaseSeconds: null };
      while (left > 0) {
        left -= 1;
        const started = process.hrtime.bigint();
        const r = await claimNext(deps, agent, {});
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (!('todo' in r)) throw new Error('the queue ran empty during the measurement');
        await complete(deps, agent, { id: r.todo.id, result: { ok: true } });
      }
    }),
  );
  return samples;
}

/** Median of 3 timings of each read that scans by table size (run per scrape or per board poll, not per claim). */
async function scanReads(b: Bench, endpointId: string): Promise<string> {
  const reads: Record<string, () => Promise<unknown>> = {
    'metrics queue counts': () => queueStateCounts(b.pool),
    'metrics oldest pending': () => oldestPendingAges(b.pool),
    'board fingerprint (each poll)': () => liveFingerprint(b.pool, [endpointId]),
    'board lane counts': () => laneCounts(b.pool, [endpointId]),
    'board lane cards': () => laneCards(b.pool, [{ endpointId, queue: 'inbox' }], 20),
  };
  const out: string[] = [];
  for (const [name, read] of Object.entries(reads)) {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = process.hrtime.bigint();
      await read();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    out.push(`${name} ${median(times).toFixed(1)} ms`);
  }
  return out.join(', ');
}

/** One size: its own database, loaded, and the samples gathered over the rounds. */
interface Side {
  label: string;
  size: number;
  db: BenchDatabase;
  b: Bench;
  /** A connection of its own that reads the backends' CPU (the workers' pool would hide the one it ran on). */
  monitor: Pool;
  endpointId: string;
  one: number[];
  many: number[];
  /** PostgreSQL CPU seconds the timed one-worker and 16-worker cycles cost (null when not local). */
  cpuOne: number | null;
  cpuMany: number | null;
}

async function setUp(label: string, size: number): Promise<Side> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  try {
    const human = await insertHuman(pool, {
      id: newId('hu'),
      email: `scale-${randomBytes(4).toString('hex')}@example.test`,
      displayName: 'scale',
      role: 'admin',
    });
    const b: Bench = { pool, humanId: human.id };
    const endpointId = await newEndpoint(b);
    const started = Date.now();
    await load(b, endpointId, size);
    await pool.query('VACUUM ANALYZE todos');
    process.stdout.write(
      `  ${label}: loaded ${size} todos in ${((Date.now() - started) / 1000).toFixed(1)} s (with VACUUM ANALYZE)\n`,
    );
    const monitor = createPool({ url: db.url, max: 1 });
    return { label, size, db, b, monitor, endpointId, one: [], many: [], cpuOne: 0, cpuMany: 0 };
  } catch (err) {
    await pool.end();
    await db.close();
    throw err;
  }
}

async function round(side: Side, claims: number): Promise<{ one: Latency; many: Latency }> {
  const { b, endpointId, size } = side;
  await topUp(b, endpointId, size);
  await cycles(b, endpointId, WARM_UP, 1);
  await topUp(b, endpointId, size);
  let cpu = await backendCpu(side.monitor);
  const one = await cycles(b, endpointId, claims, 1);
  side.cpuOne = addCpu(side.cpuOne, cpu, await backendCpu(side.monitor));
  await topUp(b, endpointId, size);
  await cycles(b, endpointId, WARM_UP, WORKERS);
  cpu = await backendCpu(side.monitor);
  const many = await cycles(b, endpointId, claims, WORKERS);
  side.cpuMany = addCpu(side.cpuMany, cpu, await backendCpu(side.monitor));
  side.one.push(...one);
  side.many.push(...many);
  return { one: latency(one), many: latency(many) };
}

function addCpu(total: number | null, before: Map<number, number> | null, after: Map<number, number> | null) {
  const used = backendCpuUsed(before, after);
  return total === null || used === null ? null : total + used;
}

/** PostgreSQL CPU ms per claim → complete cycle. */
const perCycle = (seconds: number | null, cycles: number) =>
  seconds === null ? 'n/a' : `${((seconds * 1000) / cycles).toFixed(3)}`;

const fmt = (l: Latency) => `p50 ${l.p50.toFixed(2)} ms p99 ${l.p99.toFixed(2)} ms`;
const verdict = (r: number) => (r <= TARGET ? 'met' : 'NOT met');

export async function runScaleBench(): Promise<void> {
  const sides: Side[] = [];
  try {
    const perRound = Math.ceil(CLAIMS / ROUNDS);
    process.stdout.write(
      `scale bench: claimNext latency at ${SMALL} and ${LARGE} pending todos on one endpoint, ` +
        `${ROUNDS} rounds of ${perRound} claims (after ${WARM_UP} warm-up) with 1 and with ${WORKERS} workers\n`,
    );
    const small = await setUp('small', SMALL);
    sides.push(small);
    const large = await setUp('large', LARGE);
    sides.push(large);
    process.stdout.write(`  on ${small.db.server}\n`);
    for (let r = 1; r <= ROUNDS; r++) {
      const order = r % 2 ? [small, large] : [large, small];
      const lines: string[] = [];
      for (const side of order) {
        const got = await round(side, perRound);
        lines.push(`${side.size}: 1 worker ${fmt(got.one)}, ${WORKERS} workers ${fmt(got.many)}`);
      }
      process.stdout.write(`  round ${r} (load ${loadavg()[0]?.toFixed(1)}): ${lines.join(' | ')}\n`);
    }
    const explain = process.env.BENCH_SCALE_EXPLAIN === '1';
    const buffers = [];
    const reads = [];
    for (const side of sides) {
      buffers.push(await claimStatementBuffers(side.b.pool, side.endpointId, explain));
      reads.push(await scanReads(side.b, side.endpointId));
    }
    const [s1, l1, sm, lm] = [latency(small.one), latency(large.one), latency(small.many), latency(large.many)];
    const p50 = l1.p50 / s1.p50;
    const p99 = l1.p99 / s1.p99;
    process.stdout.write(
      `${String(SMALL).padEnd(8)} 1 worker ${fmt(s1)}   ${WORKERS} workers ${fmt(sm)}   (n ${s1.n} / ${sm.n})\n` +
        `${String(LARGE).padEnd(8)} 1 worker ${fmt(l1)}   ${WORKERS} workers ${fmt(lm)}   (n ${l1.n} / ${lm.n})\n` +
        `ratio ${LARGE} ÷ ${SMALL}, 1 worker:  p50 ${p50.toFixed(2)}, p99 ${p99.toFixed(2)} ` +
        `(target ≤ ${TARGET}: ${verdict(Math.max(p50, p99))})\n` +
        `ratio ${LARGE} ÷ ${SMALL}, ${WORKERS} workers: p50 ${(lm.p50 / sm.p50).toFixed(2)}, ` +
        `p99 ${(lm.p99 / sm.p99).toFixed(2)}\n` +
        `postgres cpu ms/cycle, 1 worker: ${perCycle(small.cpuOne, s1.n)} at ${SMALL}, ` +
        `${perCycle(large.cpuOne, l1.n)} at ${LARGE}; ${WORKERS} workers: ${perCycle(small.cpuMany, sm.n)} at ` +
        `${SMALL}, ${perCycle(large.cpuMany, lm.n)} at ${LARGE}\n` +
        `claim statement shared buffers: ${buffers[0]} at ${SMALL}, ${buffers[1]} at ${LARGE}\n` +
        `scan reads at ${SMALL}: ${reads[0]}\n` +
        `scan reads at ${LARGE}: ${reads[1]}\n` +
        `load average at the end: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}\n`,
    );
  } finally {
    for (const side of sides) {
      await side.monitor.end();
      await side.b.pool.end();
      await side.db.close();
    }
  }
}
