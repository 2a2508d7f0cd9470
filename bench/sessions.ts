// Server memory and doorbell latency with 10,000 connected MCP sessions each holding an
// open notification stream, against the same server with 100, in one run.
//
// A `serve` child process (bench/serve.ts, production pool size) on the bench database.
// Its VmRSS is read at idle, once BENCH_SESSIONS_BASELINE (100) streams are open and
// recorded (mcp_sessions: live with stream_open true), then once BENCH_SESSIONS (10,000)
// are; at each of the two, the doorbell's commit → client latency is measured to one more
// SDK client of a fresh endpoint (bench/doorbell.ts). Then the sessions beyond the first
// 100 are deleted and RSS read again; BENCH_SESSIONS_CYCLES repeats that fill and delete,
// to show what the first left behind. The idle sessions are kept cheap on the client
// side: raw fetch, not the SDK — initialize, notifications/initialized, then a GET /mcp
// whose body stays unread and open.
// Targets: ≤ 512 MB RSS with 10,000 streams open (first cycle), and the doorbell p99 there
// within 2× of the 100-stream p99 of the same run.

import { readdir, readFile, stat } from 'node:fs/promises';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { measureRings, percentile } from './doorbell.js';
import { startServe, type ServeChild } from './serve.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
/** The small figure the large one is compared with (BENCH_SESSIONS_BASELINE). */
const BASELINE = Math.min(SESSIONS, Number(process.env.BENCH_SESSIONS_BASELINE ?? 100));
/** Fill-and-delete cycles on one server (BENCH_SESSIONS_CYCLES): later ones show what the first left behind. */
const CYCLES = Math.max(1, Number(process.env.BENCH_SESSIONS_CYCLES ?? 1));
/** Rings per latency reading: 500 puts the p99 on the 5th-slowest ring, not on one outlier. */
const RINGS = Number(process.env.BENCH_SESSIONS_RINGS ?? 500);
/**
 * BENCH_SESSIONS_SNAPSHOT_DIR: write heap snapshots of serve there (for bench/heap-summary.ts),
 * with all streams open and after deleting back to the baseline. Both come after the
 * readings they follow; the snapshot's own memory stays in serve's RSS after it.
 */
const SNAPSHOT_DIR = process.env.BENCH_SESSIONS_SNAPSHOT_DIR;
const TARGET_MB = 512;
const TARGET_P99_RATIO = 2;
/** Sessions set up at once: enough to finish in seconds, few enough not to time out on 2 cores. */
const CONCURRENCY = 20;
/** Quiet time before a reading, so the last burst of requests has finished and its young garbage is swept. */
const SETTLE_MS = 3_000;
/** Every client holds one socket and the server one per stream, plus the pools and files. */
const FD_HEADROOM = 200;

interface Session {
  id: string;
  /** Held, not read: undici cancels the body of a Response that is garbage-collected. */
  response: Response;
  stream: AbortController;
}

interface Reading {
  streams: number;
  rssKiB: number;
  rings: number[];
}

/** V8 heap used and committed (MB) from serve's /metrics (prom-client's default metrics; no token in the bench). */
async function heapMb(serve: ServeChild): Promise<string> {
  const text = await fetch(`${serve.url}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]) / 2 ** 20;
  return `V8 heap ${value('nodejs_heap_size_used_bytes').toFixed(1)} MB used of ${value('nodejs_heap_size_total_bytes').toFixed(1)} MB`;
}

const mb = (kib: number) => (kib / 1024).toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const latency = (ms: number[]) =>
  `doorbell p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms`;

async function openFilesLimit(pid: number | 'self'): Promise<number> {
  const limits = await readFile(`/proc/${pid}/limits`, 'utf8');
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
}

/** The median of three readings a second apart, after the server has been quiet. */
async function settledRss(serve: ServeChild): Promise<number> {
  await sleep(SETTLE_MS);
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(1_000);
    readings.push(await serve.rssKiB());
  }
  return median(readings);
}

async function openSession(url: string, credential: string, n: number): Promise<Session> {
  const base = {
    authorization: `Bearer ${credential}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const init = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'switchboard-bench', version: String(n) },
      },
    }),
  });
  await init.text();
  const id = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !id) throw new Error(`initialize answered ${init.status} without a session id`);
  const headers = { ...base, 'mcp-session-id': id, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const initialized = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.text();
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  const stream = new AbortController();
  const get = await fetch(`${url}/mcp`, {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: stream.signal,
  });
  if (get.status !== 200) throw new Error(`GET /mcp answered ${get.status}: ${await get.text()}`);
  return { id, response: get, stream };
}

/** Runs `task` for 0..count-1, CONCURRENCY at a time, calling `progress` after each. */
async function inParallel<T>(count: number, task: (i: number) => Promise<T>, progress?: (done: number) => void) {
  const results: T[] = [];
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
        progress?.(++done);
      }
    }),
  );
  return results;
}

async function streamsRecorded(pool: Pool, endpointId: string): Promise<{ live: number; open: number }> {
  const res = await pool.query<{ live: number; open: number }>(
    `SELECT count(*)::int AS live, count(*) FILTER (WHERE stream_open)::int AS open
       FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL`,
    [endpointId],
  );
  return res.rows[0] ?? { live: 0, open: 0 };
}

/** Waits (up to 60 s) for `count` live sessions with stream_open: the server marks a stream after answering its GET. */
async function waitRecorded(pool: Pool, endpointId: string, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  let seen = await streamsRecorded(pool, endpointId);
  while ((seen.open !== count || seen.live !== count) && Date.now() < deadline) {
    await sleep(200);
    seen = await streamsRecorded(pool, endpointId);
  }
  if (seen.open !== count || seen.live !== count) {
    throw new Error(`expected ${count} live sessions with stream_open, found ${JSON.stringify(seen)}`);
  }
}

/** Opens sessions until `sessions` holds `count`, reporting RSS every quarter of the way. */
async function fillTo(serve: ServeChild, credential: string, sessions: Session[], count: number): Promise<void> {
  const from = sessions.length;
  const quarter = Math.max(1, Math.floor((count - from) / 4));
  const started = Date.now();
  const opened = await inParallel(
    count - from,
    (i) => openSession(serve.url, credential, from + i),
    (done) => {
      if (done % quarter === 0) {
        void serve.rssKiB().then((kib) => process.stdout.write(`  ${from + done} streams: ${mb(kib)} MB\n`));
      }
    },
  );
  sessions.push(...opened);
  process.stdout.write(`  ${count} streams open in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

async function closeDownTo(url: string, credential: string, sessions: Session[], count: number): Promise<void> {
  const gone = sessions.splice(count);
  await inParallel(gone.length, async (i) => {
    const session = gone[i];
    if (!session) return;
    session.stream.abort();
    const res = await fetch(`${url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': session.id },
    });
    await res.text();
  });
}

/**
 * Sends SIGUSR2 (serve runs with --heapsnapshot-signal) and waits for the snapshot file to
 * be complete. A diagnostic: a failure is reported, not thrown, so the figures still print.
 */
async function heapSnapshot(serve: ServeChild, dir: string, label: string): Promise<void> {
  try {
    const before = new Set(await readdir(dir));
    process.kill(serve.pid, 'SIGUSR2');
    for (let size = -1; ;) {
      await sleep(1_000);
      // The snapshot is written on serve's main thread: /readyz answers once it is done. A
      // kept-alive connection that serve closed while it was blocked resets: ask again.
      await fetch(`${serve.url}/readyz`).then(
        (r) => r.text(),
        () => undefined,
      );
      const file = (await readdir(dir)).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
      if (!file) continue;
      const now = (await stat(`${dir}/${file}`)).size;
      if (now === size) return void process.stdout.write(`  heap snapshot (${label}): ${dir}/${file}\n`);
      size = now;
    }
  } catch (err) {
    process.stdout.write(`  heap snapshot (${label}) failed: ${String(err)}\n`);
  }
}

/** RSS and doorbell latency with `sessions.length` streams open and recorded. */
async function reading(pool: Pool, serve: ServeChild, endpointId: string, streams: number): Promise<Reading> {
  await waitRecorded(pool, endpointId, streams);
  const rssKiB = await settledRss(serve);
  const heap = await heapMb(serve);
  const rings = await measureRings(pool, serve.url, RINGS);
  process.stdout.write(`  ${streams} streams: ${mb(rssKiB)} MB RSS (${heap}), ${latency(rings)}\n`);
  return { streams, rssKiB, rings };
}

async function fileLimitsOrThrow(serve: ServeChild): Promise<string> {
  const limits = { bench: await openFilesLimit('self'), serve: await openFilesLimit(serve.pid) };
  if (Math.min(limits.bench, limits.serve) < SESSIONS + FD_HEADROOM) {
    throw new Error(
      `an open-file limit is below ${SESSIONS + FD_HEADROOM} (${JSON.stringify(limits)}): raise ulimit -n`,
    );
  }
  return `open-file limits: bench ${limits.bench}, serve ${limits.serve}`;
}

function report(idle: number, base: Reading, loaded: Reading[], after: number[]): string {
  const first = loaded[0];
  if (!first) return '';
  const label = (text: string) => text.padEnd(40);
  const p99 = (r: Reading) => percentile(r.rings, 99);
  const ratio = p99(first) / p99(base);
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const lines = [
    `${label('idle (no sessions)')}${mb(idle)} MB RSS`,
    `${label(`${base.streams} streams open`)}${mb(base.rssKiB)} MB RSS; ${latency(base.rings)}`,
    `${label(`${first.streams} streams open`)}${mb(first.rssKiB)} MB RSS; ${latency(first.rings)}`,
    `${label('RSS vs target')}${mb(first.rssKiB)} MB of ≤ ${TARGET_MB} MB: ${met(first.rssKiB / 1024 <= TARGET_MB)}`,
    `${label(`per stream (${first.streams} vs ${base.streams})`)}` +
      `${((first.rssKiB - base.rssKiB) / (first.streams - base.streams)).toFixed(1)} KiB`,
    `${label(`doorbell p99, ${first.streams} ÷ ${base.streams}`)}` +
      `${ratio.toFixed(2)}× (target ≤ ${TARGET_P99_RATIO}×: ${met(ratio <= TARGET_P99_RATIO)})`,
  ];
  loaded.forEach((r, i) => {
    if (i > 0)
      lines.push(`${label(`cycle ${i + 1}: ${r.streams} streams open`)}${mb(r.rssKiB)} MB RSS; ${latency(r.rings)}`);
    lines.push(`${label(`cycle ${i + 1}: back to ${base.streams} streams`)}${mb(after[i] ?? NaN)} MB RSS`);
  });
  return `${lines.join('\n')}\n`;
}

export async function runSessionsBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 2 });
  const snapshotArgs = SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOT_DIR}`] : [];
  const serve = await startServe(db.url, {}, snapshotArgs);
  try {
    process.stdout.write(
      `sessions bench: ${BASELINE} then ${SESSIONS} sessions with open streams, ${RINGS} rings at each, ` +
        `${CYCLES} cycle(s), serve child pid ${serve.pid}, on ${db.server}\n  ${await fileLimitsOrThrow(serve)}\n`,
    );
    const { endpointId, credential } = await vendBenchEndpoint(pool);
    const idle = await settledRss(serve);
    process.stdout.write(`  idle: ${mb(idle)} MB\n`);
    const sessions: Session[] = [];
    await fillTo(serve, credential, sessions, BASELINE);
    const base = await reading(pool, serve, endpointId, BASELINE);
    const loaded: Reading[] = [];
    const after: number[] = [];
    for (let i = 0; i < CYCLES; i++) {
      await fillTo(serve, credential, sessions, SESSIONS);
      loaded.push(await reading(pool, serve, endpointId, SESSIONS));
      if (SNAPSHOT_DIR) await heapSnapshot(serve, SNAPSHOT_DIR, `${SESSIONS} streams`);
      await closeDownTo(serve.url, credential, sessions, BASELINE);
      await waitRecorded(pool, endpointId, BASELINE);
      after.push(await settledRss(serve));
      process.stdout.write(
        `  back to ${BASELINE} streams: ${mb(after.at(-1) ?? NaN)} MB RSS (${await heapMb(serve)})\n`,
      );
      if (SNAPSHOT_DIR) await heapSnapshot(serve, SNAPSHOT_DIR, `back to ${BASELINE} streams`);
    }
    process.stdout.write(report(idle, base, loaded, after));
    await closeDownTo(serve.url, credential, sessions, 0);
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
