// Server memory with 1,000 connected MCP sessions each holding an open notification
// stream, against the same server idle, in one run.
//
// A `serve` child process (bench/serve.ts, production pool size) on the bench database.
// Its VmRSS is read at idle (the baseline), while sessions connect, once all streams are
// open and recorded (mcp_sessions: the sessions live with stream_open true), and after
// every session is deleted again; then the cycle repeats, to show what the first left
// behind. The client side is kept cheap: raw fetch, not the SDK — initialize,
// notifications/initialized, then a GET /mcp whose body stays unread and open.
// Target: ≤ 300 MB RSS with all streams open, on the first cycle.

import { readFile } from 'node:fs/promises';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { startServe, type ServeChild } from './serve.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1_000);
/** Connect-and-delete cycles on one server (BENCH_SESSIONS_CYCLES): later ones show what the first left behind. */
const CYCLES = Math.max(1, Number(process.env.BENCH_SESSIONS_CYCLES ?? 3));
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

const mb = (kib: number) => (kib / 1024).toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
async function inParallel<T>(
  count: number,
  task: (i: number) => Promise<T>,
  progress?: (done: number) => Promise<void>,
) {
  const results: T[] = [];
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
        await progress?.(++done);
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

/** Waits (up to 30 s) for the stream marks, which the server writes after answering the GET. */
async function waitRecorded(pool: Pool, endpointId: string): Promise<{ live: number; open: number }> {
  const deadline = Date.now() + 30_000;
  let seen = await streamsRecorded(pool, endpointId);
  while (seen.open < SESSIONS && Date.now() < deadline) {
    await sleep(200);
    seen = await streamsRecorded(pool, endpointId);
  }
  return seen;
}

async function vend(pool: Pool): Promise<{ endpointId: string; credential: string }> {
  return vendBenchEndpoint(pool);
}

async function closeSessions(url: string, credential: string, sessions: Session[]): Promise<void> {
  await inParallel(sessions.length, async (i) => {
    const session = sessions[i];
    if (!session) return false;
    session.stream.abort();
    const res = await fetch(`${url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': session.id },
    });
    await res.text();
    return true;
  });
}

interface Cycle {
  connectSeconds: number;
  recorded: { live: number; open: number };
  loaded: number;
  closed: number;
  left: number;
}

/** Connects SESSIONS sessions with open streams, reads RSS, deletes them all, reads RSS again. */
async function cycle(
  pool: Pool,
  serve: ServeChild,
  vended: { endpointId: string; credential: string },
): Promise<Cycle> {
  const started = Date.now();
  const quarter = Math.max(1, Math.floor(SESSIONS / 4));
  const sessions = await inParallel(
    SESSIONS,
    (i) => openSession(serve.url, vended.credential, i),
    async (done) => {
      if (done % quarter === 0) process.stdout.write(`  ${done} streams: ${mb(await serve.rssKiB())} MB\n`);
    },
  );
  const connectSeconds = (Date.now() - started) / 1000;
  const recorded = await waitRecorded(pool, vended.endpointId);
  const loaded = await settledRss(serve);
  await closeSessions(serve.url, vended.credential, sessions);
  const left = (await streamsRecorded(pool, vended.endpointId)).live;
  const closed = await settledRss(serve);
  process.stdout.write(
    `  connected in ${connectSeconds.toFixed(1)} s; mcp_sessions: ${recorded.live} live, ` +
      `${recorded.open} with stream_open; ${mb(loaded)} MB open, ${mb(closed)} MB after deleting (${left} left)\n`,
  );
  if (recorded.open !== SESSIONS || recorded.live !== SESSIONS) {
    throw new Error(`expected ${SESSIONS} live sessions with stream_open, found ${JSON.stringify(recorded)}`);
  }
  return { connectSeconds, recorded, loaded, closed, left };
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

export async function runSessionsBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 2 });
  const serve = await startServe(db.url);
  try {
    process.stdout.write(
      `sessions bench: ${SESSIONS} sessions with open streams, ${CYCLES} cycles, serve child pid ${serve.pid}, on ${db.server}\n` +
        `  ${await fileLimitsOrThrow(serve)}\n`,
    );
    const vended = await vend(pool);
    const idle = await settledRss(serve);
    process.stdout.write(`  idle: ${mb(idle)} MB\n`);
    const first = await cycle(pool, serve, vended);
    // More cycles on the same server: memory kept from the first should be reused, not added to.
    const later: Cycle[] = [];
    for (let i = 1; i < CYCLES; i++) later.push(await cycle(pool, serve, vended));
    const last = later.at(-1) ?? first;
    const label = (text: string) => text.padEnd(36);
    process.stdout.write(
      `${label('idle (no sessions)')}${mb(idle)} MB RSS\n` +
        `${label(`${SESSIONS} sessions, streams open`)}${mb(first.loaded)} MB RSS (target ≤ 300 MB)\n` +
        `${label('per session')}${((first.loaded - idle) / SESSIONS).toFixed(1)} KiB\n` +
        `${label('after deleting them')}${mb(first.closed)} MB RSS\n` +
        `${label(`cycle ${CYCLES}: ${SESSIONS} streams open`)}${mb(last.loaded)} MB RSS\n` +
        `${label(`cycle ${CYCLES}: after deleting them`)}${mb(last.closed)} MB RSS\n`,
    );
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
