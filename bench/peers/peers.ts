// Switchboard next to two peer PostgreSQL job queues, graphile-worker and pg-boss, at
// their newest releases (which need Node.js 22 or later: this folder is a package of its
// own, run by `npm run bench:peers` under Node.js 24, see bench/peers/run.sh), on the
// same server, with the same number of workers (16) and the same number of jobs (20,000),
// each job doing no work. For each system, each run:
//
// - enqueue one by one: 2,000 jobs (BENCH_ENQUEUE_SINGLE) from one client, each awaited
//   before the next — Switchboard's `createTodo` use case, graphile-worker's `addJob`,
//   pg-boss's `send`;
// - enqueue in bulk: the rest of the run's jobs in one call from one client —
//   graphile-worker's `addJobs`, pg-boss's `insert`; Switchboard has no bulk create, so its
//   figure is the bench seed's single `INSERT … SELECT generate_series` (the statement
//   `seedTodos` in bench/claim.ts sends), printed for reference only;
// - VACUUM ANALYZE of the system's job table (not timed, as `seedTodos` does);
// - claim → complete: 16 workers drain the queue. Switchboard: `switchboardRound` from
//   bench/claim.ts (the store-level use cases, coalescing as `serve` does). graphile-worker:
//   its own runner with concurrency 16, unbatched (no local queue, no completion batching:
//   the defaults), and again batched (a local queue, completions sharing statements).
//   pg-boss: 16 loops of `fetch` (batch size 1) → `complete`, its one-job-at-a-time API;
//   its `work()` runner is measured separately because it sleeps its polling interval
//   (minimum 0.5 s) after every fetch, jobs found or not.
//
// A warm-up run of each system (2,000 jobs), then 3 runs (BENCH_ROUNDS) rotating which
// system goes first; each figure is the median of its runs. Targets: Switchboard's
// claim → complete ≥ 1.0× graphile-worker's unbatched (stretch: ≥ 0.5× its batched) and
// ≥ 1.5× pg-boss's.

import { randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { namedShareOf } from '../../src/db/generic-share.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createTodo } from '../../src/todos/index.js';
import { switchboardRound, WORKERS } from '../claim.js';
import { backendCpu, backendCpuUsed } from '../cpu.js';
import { benchDatabase, median, vendBenchEndpoint } from '../db.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
const SINGLE = Math.min(TODOS, Number(process.env.BENCH_ENQUEUE_SINGLE ?? 2_000));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Math.min(TODOS, 2_000);
const PGBOSS_WORK_SECONDS = Number(process.env.BENCH_PGBOSS_WORK_SECONDS ?? 5);
// graphile-worker's batched mode: how many jobs its local queue fetches at once.
const LOCAL_QUEUE = Number(process.env.BENCH_GW_LOCAL_QUEUE ?? 500);
// BENCH_PEERS=graphile-worker (a comma list) leaves the other peer out; Switchboard always runs.
const PEERS = (process.env.BENCH_PEERS ?? 'graphile-worker,graphile-worker-batched,pg-boss')
  .split(',')
  .map((p) => p.trim());

interface RunResult {
  /** One-by-one enqueue, jobs/s. */
  single: number;
  /** Bulk enqueue, jobs/s (NaN when there were none to insert). */
  bulk: number;
  /** Claim → complete with WORKERS workers, jobs/s. */
  drain: number;
  /** CPU per job while draining, ms: this process (the workers), and PostgreSQL's backends. */
  clientMs: number;
  pgMs: number;
  /** WAL written per job while draining, bytes (the server's, whoever wrote it). */
  walBytes: number;
}

interface System {
  name: string;
  run(jobs: number, single: number): Promise<RunResult>;
  close(): Promise<void>;
}

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

async function timedRate(jobs: number, work: () => Promise<unknown>): Promise<number> {
  if (jobs === 0) {
    await work();
    return NaN;
  }
  const started = process.hrtime.bigint();
  await work();
  return jobs / seconds(started);
}

/**
 * Runs `drain` (which returns jobs/s) and reads the CPU it cost per job: this process's, and
 * that of the PostgreSQL backends connected to `pool`'s database (NaN when PostgreSQL is
 * not on this machine).
 */
async function drainWithCpu(
  pool: pg.Pool,
  jobs: number,
  drain: () => Promise<number>,
): Promise<Pick<RunResult, 'drain' | 'clientMs' | 'pgMs' | 'walBytes'>> {
  const lsn = async () => (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
  const walBefore = await lsn();
  const backends = await backendCpu(pool);
  const client = process.cpuUsage();
  const rate = await drain();
  const used = process.cpuUsage(client);
  const pgSeconds = backendCpuUsed(backends, await backendCpu(pool));
  const wal = await pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [
    walBefore,
  ]);
  return {
    drain: rate,
    clientMs: (used.user + used.system) / 1000 / jobs,
    pgMs: pgSeconds === null ? NaN : (pgSeconds * 1000) / jobs,
    walBytes: Number(wal.rows[0]?.bytes) / jobs,
  };
}

async function switchboardSystem(pool: Pool): Promise<System> {
  const deps = { db: pool, defaultLeaseSeconds: 300 };
  return {
    name: 'switchboard',
    async run(jobs, single) {
      const { endpointId, humanId } = await vendBenchEndpoint(pool);
      const singleRate = await timedRate(single, async () => {
        for (let i = 0; i < single; i++) {
          await createTodo(deps, { endpointId }, { humanId }, { queue: 'inbox', title: `job ${i}` });
        }
      });
      const bulkRate = await timedRate(jobs - single, () =>
        pool.query(
          `INSERT INTO todos (endpoint_id, id, queue, title, ready_at)
           SELECT $1, 'td_' || lpad(g::text, 26, '0'), 'inbox', 'bench ' || g, now() FROM generate_series(1, $2) g`,
          [endpointId, jobs - single],
        ),
      );
      await pool.query('VACUUM ANALYZE todos');
      const drained = await drainWithCpu(pool, jobs, () => switchboardRound(pool, endpointId, jobs));
      return { single: singleRate, bulk: bulkRate, ...drained };
    },
    async close() {},
  };
}

/** A fresh database next to the bench database, dropped by the returned function. */
async function peerDatabase(benchUrl: string, suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: benchUrl });
  await admin.connect();
  const name = `sb_peer_${suffix}_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(benchUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * graphile-worker's runner with 16 concurrent jobs. Unbatched (its defaults): each worker
 * fetches its own job and each completion is its own statement. Batched: the local queue
 * fetches and locks up to LOCAL_QUEUE jobs a statement and hands them out in memory, and
 * completions (and failures) wait 0 ms for others to share their statement — its own
 * high-throughput mode (its performance docs, "batching").
 */
async function graphileSystem(benchUrl: string, batched: boolean): Promise<System> {
  // graphile-worker formats an info line for every successful job unless NO_LOG_SUCCESS is
  // set when it loads (dist/worker.js); with the silent logger below that line would only be
  // built and dropped, so it is skipped. Set before the dynamic import.
  process.env.NO_LOG_SUCCESS = '1';
  const gw = await import('graphile-worker');
  const db = await peerDatabase(benchUrl, batched ? 'gwb' : 'gw');
  const logger = new gw.Logger(() => (level, message) => {
    if (String(level) === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  // graphile-worker's own advice: pool size max(10, concurrency + 2). It holds one
  // connection for LISTEN, and completes a job while its worker fetches the next.
  const pgPool = new pg.Pool({ connectionString: db.url, max: WORKERS + 2 });
  // The database is dropped WITH (FORCE) at the end, which ends any connection left open.
  let closing = false;
  const onError = (e: Error) => closing || process.stderr.write(`graphile-worker pool: ${String(e)}\n`);
  pgPool.on('error', onError);
  pgPool.on('connect', (client) => client.on('error', onError));
  await gw.runMigrations({ pgPool, logger });
  const utils = await gw.makeWorkerUtils({ pgPool, logger });
  return {
    name: batched ? 'graphile-worker batched' : 'graphile-worker',
    async run(jobs, single) {
      const singleRate = await timedRate(single, async () => {
        for (let i = 0; i < single; i++) await utils.addJob('noop', { i });
      });
      const specs = Array.from({ length: jobs - single }, (_, i) => ({ identifier: 'noop', payload: { i } }));
      const bulkRate = await timedRate(specs.length, () => utils.addJobs(specs));
      await pgPool.query('VACUUM ANALYZE graphile_worker._private_jobs');
      const remaining = async () =>
        Number(
          (await pgPool.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker._private_jobs')).rows[0]?.n,
        );
      if ((await remaining()) !== jobs) throw new Error(`graphile-worker: expected ${jobs} queued jobs`);

      const drained = await drainWithCpu(pgPool, jobs, async () => {
        let succeeded = 0;
        let allSucceeded = () => undefined as void;
        const done = new Promise<void>((resolve) => (allSucceeded = resolve));
        const started = process.hrtime.bigint();
        const runner = await gw.run({
          pgPool,
          logger,
          concurrency: WORKERS,
          noHandleSignals: true,
          taskList: {
            noop: async () => {
              if (++succeeded === jobs) allSucceeded();
            },
          },
          crontab: '',
          preset: {
            worker: batched
              ? { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 }
              : // Unbatched, spelled out (these are the defaults).
                { localQueue: { size: -1 }, completeJobBatchDelay: -1, failJobBatchDelay: -1 },
          },
        });
        await done;
        // A job's completion (a DELETE) is sent without the worker waiting for it, so the
        // last ones may still be in flight when the last task returns: wait for the table.
        while ((await remaining()) > 0) await new Promise((r) => setTimeout(r, 2));
        const rate = jobs / seconds(started);
        await runner.stop();
        return rate;
      });
      return { single: singleRate, bulk: bulkRate, ...drained };
    },
    async close() {
      closing = true;
      await utils.release();
      await pgPool.end();
      await db.drop();
    },
  };
}

async function pgBossSystem(benchUrl: string): Promise<System & { workRate(): Promise<number> }> {
  const db = await peerDatabase(benchUrl, 'boss');
  // No cron (schedule) and no maintenance (supervise): neither has work to do here, and
  // either would add its own queries to the measured window.
  const boss = new PgBoss({ connectionString: db.url, max: WORKERS, schedule: false, supervise: false });
  let closing = false;
  boss.on('error', (e) => closing || process.stderr.write(`pg-boss: ${String(e)}\n`));
  await boss.start();
  // For the CPU readings of pg-boss's backends (one connection, outside the measured loops).
  const probe = new pg.Pool({ connectionString: db.url, max: 1 });
  // pool.end() can resolve while a client's socket is still closing; the DROP … WITH
  // (FORCE) (or an embedded server stopping) then ends it with an error nobody awaits.
  probe.on('error', (e) => closing || process.stderr.write(`pg-boss probe: ${String(e)}\n`));
  let queues = 0;
  const freshQueue = async () => {
    const name = `bench_${++queues}`;
    await boss.createQueue(name);
    return name;
  };
  return {
    name: 'pg-boss',
    async run(jobs, single) {
      const queue = await freshQueue();
      const singleRate = await timedRate(single, async () => {
        for (let i = 0; i < single; i++) await boss.send(queue, { i });
      });
      const rows = Array.from({ length: jobs - single }, (_, i) => ({ data: { i } }));
      const bulkRate = await timedRate(rows.length, () => boss.insert(queue, rows));
      await probe.query('VACUUM ANALYZE pgboss.job');
      const drained = await drainWithCpu(probe, jobs, async () => {
        const started = process.hrtime.bigint();
        const counts = await Promise.all(
          Array.from({ length: WORKERS }, async () => {
            let n = 0;
            for (;;) {
              const [job] = await boss.fetch(queue, { batchSize: 1 });
              if (!job) return n;
              await boss.complete(queue, job.id);
              n += 1;
            }
          }),
        );
        const rate = jobs / seconds(started);
        const total = counts.reduce((a, b) => a + b, 0);
        if (total !== jobs) throw new Error(`pg-boss: expected ${jobs} jobs, completed ${total}`);
        return rate;
      });
      return { single: singleRate, bulk: bulkRate, ...drained };
    },
    /** pg-boss's own runner: 16 `work()` loops, batch size 1, polling at its 0.5 s minimum. */
    async workRate() {
      const queue = await freshQueue();
      await boss.insert(
        queue,
        Array.from({ length: 2_000 }, (_, i) => ({ data: { i } })),
      );
      let completed = 0;
      const started = process.hrtime.bigint();
      for (let w = 0; w < WORKERS; w++) {
        await boss.work(queue, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async () => {
          completed += 1;
        });
      }
      await new Promise((r) => setTimeout(r, PGBOSS_WORK_SECONDS * 1000));
      const rate = completed / seconds(started);
      await boss.offWork(queue);
      return rate;
    },
    async close() {
      closing = true;
      await boss.stop({ graceful: true, close: true, timeout: 5_000 });
      await probe.end();
      await db.drop();
    },
  };
}

const fmtRate = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '—');

export async function runPeersBench(): Promise<void> {
  const db = await benchDatabase();
  // As serve's pool: the named statements on a share of their own (docs/design/coalescing.md, "Planning").
  const pool = createPool({ url: db.url, max: WORKERS, namedShare: namedShareOf(WORKERS) });
  const systems: System[] = [];
  try {
    const mem = `${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
    // bench/db.ts's server label asks for the version but reads the wrong column; read it here.
    const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    process.stdout.write(
      `peers bench: ${WORKERS} workers, ${TODOS} jobs a run (${SINGLE} enqueued one by one, the rest in bulk), ` +
        `${ROUNDS} runs each, on ${db.server}\n` +
        `machine: ${cpus().length} vCPUs, ${mem}, Node ${process.version}, PostgreSQL ${version ?? '?'}; ` +
        `load average ${load()}\n` +
        `peers: graphile-worker ${await peerVersion('graphile-worker')}, pg-boss ${await peerVersion('pg-boss')}\n`,
    );
    systems.push(await switchboardSystem(pool));
    if (PEERS.includes('graphile-worker')) systems.push(await graphileSystem(db.url, false));
    if (PEERS.includes('graphile-worker-batched')) systems.push(await graphileSystem(db.url, true));
    const boss = PEERS.includes('pg-boss') ? await pgBossSystem(db.url) : null;
    if (boss) systems.push(boss);

    for (const s of systems) await s.run(WARMUP, Math.min(200, WARMUP));
    const results = new Map<string, RunResult[]>(systems.map((s) => [s.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which system goes first, so a trend in the machine favours none.
      const order = systems.map((_, i) => systems[(i + round) % systems.length] as System);
      for (const s of order) {
        const r = await s.run(TODOS, SINGLE);
        results.get(s.name)?.push(r);
        process.stdout.write(
          `  run ${round + 1} ${s.name.padEnd(23)} enqueue one-by-one ${fmtRate(r.single)}/s, ` +
            `bulk ${fmtRate(r.bulk)}/s, claim→complete ${fmtRate(r.drain)}/s ` +
            `(cpu ms/job: client ${r.clientMs.toFixed(3)}, postgres ${r.pgMs.toFixed(3)}; ` +
            `WAL ${r.walBytes.toFixed(0)} B/job; load ${load()})\n`,
        );
      }
    }
    const workRate = boss && PGBOSS_WORK_SECONDS > 0 ? await boss.workRate() : NaN;

    const med = (name: string, key: keyof RunResult) => median((results.get(name) ?? []).map((r) => r[key]));
    const sbDrain = med('switchboard', 'drain');
    const sbSingle = med('switchboard', 'single');
    const cpu = (name: string) => med(name, 'clientMs') + med(name, 'pgMs');
    const rows = systems.map((s) => {
      const drain = med(s.name, 'drain');
      const single = med(s.name, 'single');
      const isSb = s.name === 'switchboard';
      return [
        s.name,
        fmtRate(single),
        isSb ? `(${fmtRate(med(s.name, 'bulk'))} SQL)` : fmtRate(med(s.name, 'bulk')),
        fmtRate(drain),
        isSb ? '—' : `${(sbSingle / single).toFixed(2)}×`,
        isSb ? '—' : `${(sbDrain / drain).toFixed(2)}×`,
        med(s.name, 'clientMs').toFixed(3),
        med(s.name, 'pgMs').toFixed(3),
        isSb ? '—' : `${(cpu(s.name) / cpu('switchboard')).toFixed(2)}×`,
        med(s.name, 'walBytes').toFixed(0),
      ];
    });
    const header = [
      'system',
      'enqueue 1-by-1/s',
      'enqueue bulk/s',
      'claim→complete/s',
      'sb ÷ (1-by-1)',
      'sb ÷ (claim)',
      'client cpu ms/job',
      'postgres cpu ms/job',
      'cpu ratio',
      'WAL B/job',
    ];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ') + '\n';
    process.stdout.write(
      `medians of ${ROUNDS} runs (cpu ratio: the peer's client + postgres CPU per claim→complete job ÷ ` +
        `switchboard's, the rate ratio if both were CPU-bound):\n` +
        line(header) +
        rows.map(line).join(''),
    );
    if (Number.isFinite(workRate)) {
      process.stdout.write(
        `pg-boss work() runner (16 workers, batch size 1, polling 0.5 s), ${PGBOSS_WORK_SECONDS} s sample: ` +
          `${workRate.toFixed(0)} jobs/s\n`,
      );
    }
    const gwRatio = sbDrain / med('graphile-worker', 'drain');
    const gwBatchedRatio = sbDrain / med('graphile-worker batched', 'drain');
    if (Number.isFinite(gwBatchedRatio)) {
      process.stdout.write(
        `stretch: switchboard claim→complete ≥ 0.5× graphile-worker batched: ${gwBatchedRatio.toFixed(2)}× ` +
          `${gwBatchedRatio >= 0.5 ? 'met' : 'NOT met'}\n`,
      );
    }
    const bossRatio = sbDrain / med('pg-boss', 'drain');
    if (Number.isFinite(gwRatio)) {
      process.stdout.write(
        `target: switchboard claim→complete ≥ 1.0× graphile-worker (unbatched): ${gwRatio.toFixed(2)}× ` +
          `${gwRatio >= 1 ? 'met' : 'NOT met'}\n`,
      );
    }
    if (Number.isFinite(bossRatio)) {
      process.stdout.write(
        `target: switchboard claim→complete ≥ 1.5× pg-boss: ${bossRatio.toFixed(2)}× ${bossRatio >= 1.5 ? 'met' : 'NOT met'}\n`,
      );
    }
    process.stdout.write(`load average at the end: ${load()}\n`);
  } finally {
    for (const s of systems) await s.close();
    await pool.end();
    await db.close();
  }
}

/** A peer's installed version, from its package.json in this folder's node_modules (not in its exports). */
async function peerVersion(name: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const file = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(await readFile(file, 'utf8')) as { version: string }).version;
}
