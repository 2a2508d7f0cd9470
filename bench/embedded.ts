// The embedded default: `switchboard serve` with no SWITCHBOARD_DATABASE_URL, on a fresh
// temporary SWITCHBOARD_DATA_DIR. Needs no database of its own.
//
// Start: the time from spawning `node bin/switchboard.js serve` to `/readyz` answering
// 200 (bench/serve.ts; polled every 100 ms). First start: an empty data dir (initdb,
// PostgreSQL start, CREATE DATABASE, migrations, then the server). Warm start: the same
// data dir again. Median of 3 each. Baseline in the same run: the embedded module alone
// (src/db/embedded.ts startEmbedded, called in this process: the same binaries and
// arguments — initdb on an empty dir, or a start on an initialised one — up to the first
// accepted connection and the database existing), so the ratio is what Node's boot, the
// sources' load, the migrations and the server's own start add on top.
//
// Memory: VmRSS of the serve process, and of the embedded PostgreSQL (the postmaster and
// every child of it, from /proc) — summed RSS counts shared_buffers once per process that
// touched it, so PSS (proportional set size, /proc/<pid>/smaps_rollup) is printed beside
// it. At idle (3 s after ready, median of 3 readings), then under the MCP benchmark load
// (bench/mcp.ts's loop: 16 sessions of claim_next → complete over `node:http`, draining
// BENCH_TODOS todos), sampled every 500 ms: peak and median.

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded, type EmbeddedPostgres } from '../src/db/embedded.js';
import { createPool } from '../src/db/pool.js';
import { seedTodos, timed, WORKERS } from './claim.js';
import { backendCpuUsed, readCpuSeconds } from './cpu.js';
import { median, vendBenchEndpoint } from './db.js';
import { openSession } from './mcp-client.js';
import { readRssKiB, startServe, type ServeChild } from './serve.js';

const RUNS = Number(process.env.BENCH_EMBEDDED_RUNS ?? 3);
const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
const SAMPLE_MS = 500;

const tempDir = () => mkdtemp(join(tmpdir(), 'switchboard-bench-embedded-'));
const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;

async function postmasterOf(dataDir: string): Promise<number> {
  const text = await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/** The embedded server's processes: the postmaster and its children (backends, checkpointer, walwriter…). */
async function postgresPids(postmaster: number): Promise<number[]> {
  const pids = [postmaster];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === postmaster) pids.push(Number(entry));
  }
  return pids;
}

async function pssKiB(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  return Number(/^Pss:\s+(\d+)\s+kB$/m.exec(text)?.[1] ?? 0);
}

interface Memory {
  serveRss: number;
  pgRss: number;
  pgPss: number;
  pgProcesses: number;
}

async function memory(serve: ServeChild, postmaster: number): Promise<Memory> {
  const pids = await postgresPids(postmaster);
  let pgRss = 0;
  let pgPss = 0;
  for (const pid of pids) {
    pgRss += await readRssKiB(pid).catch(() => 0);
    pgPss += await pssKiB(pid);
  }
  return { serveRss: await serve.rssKiB(), pgRss, pgPss, pgProcesses: pids.length };
}

/** CPU seconds of each embedded PostgreSQL process, by pid. */
async function postgresCpu(postmaster: number): Promise<Map<number, number>> {
  const seen = new Map<number, number>();
  for (const pid of await postgresPids(postmaster)) {
    const seconds = await readCpuSeconds(pid);
    if (seconds !== null) seen.set(pid, seconds);
  }
  return seen;
}

const mb = (kib: number) => (kib / 1024).toFixed(1);
const describe = (m: Memory) =>
  `serve ${mb(m.serveRss)} MB, postgres RSS ${mb(m.pgRss)} MB / PSS ${mb(m.pgPss)} MB (${m.pgProcesses} processes)`;

function medianOf(samples: Memory[]): Memory {
  return {
    serveRss: median(samples.map((s) => s.serveRss)),
    pgRss: median(samples.map((s) => s.pgRss)),
    pgPss: median(samples.map((s) => s.pgPss)),
    pgProcesses: median(samples.map((s) => s.pgProcesses)),
  };
}

function peakOf(samples: Memory[]): Memory {
  return {
    serveRss: Math.max(...samples.map((s) => s.serveRss)),
    pgRss: Math.max(...samples.map((s) => s.pgRss)),
    pgPss: Math.max(...samples.map((s) => s.pgPss)),
    pgProcesses: Math.max(...samples.map((s) => s.pgProcesses)),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Serve on the embedded default in `dataDir`, and how long it took to answer /readyz 200. */
async function serveStart(dataDir: string): Promise<{ ms: number; serve: ServeChild }> {
  const started = process.hrtime.bigint();
  const serve = await startServe(null, { SWITCHBOARD_DATA_DIR: dataDir });
  return { ms: elapsedMs(started), serve };
}

/** The baseline: the embedded module alone on `dataDir`, and how long it took. */
async function embeddedStart(dataDir: string): Promise<{ ms: number; embedded: EmbeddedPostgres }> {
  const started = process.hrtime.bigint();
  const embedded = await startEmbedded({ dataDir });
  return { ms: elapsedMs(started), embedded };
}

/** Stops serve and makes sure the embedded PostgreSQL it started is gone too. */
async function stopServe(serve: ServeChild, dataDir: string): Promise<void> {
  const postmaster = await postmasterOf(dataDir).catch(() => 0);
  await serve.stop();
  if (postmaster > 0) {
    for (let i = 0; i < 100 && (await readFile(`/proc/${postmaster}/stat`).catch(() => null)); i++) await sleep(100);
    try {
      process.kill(postmaster, 0);
      process.stderr.write(`embedded PostgreSQL ${postmaster} outlived serve; stopping it\n`);
      process.kill(postmaster, 'SIGINT');
    } catch {
      // gone, as it should be
    }
  }
}

/** The MCP benchmark's loop against this server: 16 sessions of claim_next → complete; RSS sampled meanwhile. */
async function underLoad(serve: ServeChild, dataDir: string, postmaster: number) {
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const { port } = JSON.parse(await readFile(join(dataDir, 'embedded.json'), 'utf8')) as { port: number };
  const pool = createPool({
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/switchboard`,
    max: 2,
  });
  try {
    const { endpointId, credential } = await vendBenchEndpoint(pool);
    await seedTodos(pool, endpointId, TODOS);
    const sessions = await Promise.all(
      Array.from({ length: WORKERS }, () => openSession('raw', serve.url, credential)),
    );
    const samples: Memory[] = [];
    let running = true;
    const sampler = (async () => {
      while (running) {
        samples.push(await memory(serve, postmaster));
        await sleep(SAMPLE_MS);
      }
    })();
    let rate = 0;
    const serveCpu = await serve.cpuSeconds();
    const pgCpu = await postgresCpu(postmaster);
    try {
      rate = await timed(
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
        TODOS,
      );
    } finally {
      running = false;
      await sampler;
      await Promise.all(sessions.map((s) => s.end()));
    }
    const serveMs = (((await serve.cpuSeconds()) - serveCpu) * 1000) / TODOS;
    const pgMs = ((backendCpuUsed(pgCpu, await postgresCpu(postmaster)) ?? NaN) * 1000) / TODOS;
    return { rate, serveMs, pgMs, peak: peakOf(samples), median: medianOf(samples), samples: samples.length };
  } finally {
    await pool.end();
  }
}

export async function runEmbeddedBench(): Promise<void> {
  const dirs: string[] = [];
  const fresh = async () => {
    const dir = await tempDir();
    dirs.push(dir);
    return dir;
  };
  let live: { serve: ServeChild; dir: string } | null = null;
  try {
    process.stdout.write(
      `embedded bench: serve on the embedded default, ${RUNS} first and ${RUNS} warm starts, ` +
        `then memory at idle and under ${WORKERS} MCP sessions draining ${TODOS} todos\n`,
    );
    const baseFirst: number[] = [];
    const baseWarm: number[] = [];
    const first: number[] = [];
    const warm: number[] = [];
    // Unmeasured warm-up of both: the binaries and the compiled dist/ in the page cache.
    // Then baseline and serve alternate, so a trend in the machine favours neither.
    const warmDir = await fresh();
    await (await startEmbedded({ dataDir: warmDir })).stop();
    const warmUp = await serveStart(await fresh());
    await stopServe(warmUp.serve, dirs.at(-1) ?? '');
    let baseDir = '';
    for (let run = 1; run <= RUNS; run++) {
      baseDir = await fresh();
      const cold = await embeddedStart(baseDir);
      baseFirst.push(cold.ms);
      await cold.embedded.stop();
      const again = await embeddedStart(baseDir);
      baseWarm.push(again.ms);
      await again.embedded.stop();

      const dir = await fresh();
      const coldServe = await serveStart(dir);
      first.push(coldServe.ms);
      await stopServe(coldServe.serve, dir);
      const warmServe = await serveStart(dir);
      warm.push(warmServe.ms);
      await stopServe(warmServe.serve, dir);
      process.stdout.write(
        `  run ${run}: baseline first ${baseFirst.at(-1)?.toFixed(0)} ms, warm ${baseWarm.at(-1)?.toFixed(0)} ms; ` +
          `serve first ${first.at(-1)?.toFixed(0)} ms, warm ${warm.at(-1)?.toFixed(0)} ms (load ${loadavg()[0]?.toFixed(1)})\n`,
      );
    }
    const dir = dirs.at(-1) ?? (await fresh());
    const { serve } = await serveStart(dir);
    live = { serve, dir };
    const postmaster = await postmasterOf(dir);
    await sleep(3_000);
    const idle: Memory[] = [];
    for (let i = 0; i < 3; i++) {
      idle.push(await memory(serve, postmaster));
      await sleep(1_000);
    }
    const load = await underLoad(serve, dir, postmaster);
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    process.stdout.write(
      `first start  serve ${median(first).toFixed(0)} ms, baseline (initdb + start) ${median(baseFirst).toFixed(0)} ms, ` +
        `ratio ${ratio(median(first), median(baseFirst))}\n` +
        `warm start   serve ${median(warm).toFixed(0)} ms, baseline (start) ${median(baseWarm).toFixed(0)} ms, ` +
        `ratio ${ratio(median(warm), median(baseWarm))}\n` +
        `idle         ${describe(medianOf(idle))}\n` +
        `under load   peak: ${describe(load.peak)}\n` +
        `             median: ${describe(load.median)} (${load.samples} samples)\n` +
        `             ${load.rate.toFixed(0)} cycles/s; cpu ms/cycle: serve ${load.serveMs.toFixed(2)}, ` +
        `postgres ${load.pgMs.toFixed(2)} (load ${loadavg()[0]?.toFixed(1)})\n`,
    );
  } finally {
    if (live) await stopServe(live.serve, live.dir);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}
