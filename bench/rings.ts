// Rings per todo (docs/design/doorbell-acknowledgement.md, "Who is rung"): a bulk push of
// TODOS todos to one endpoint with SESSIONS streaming sessions that declared claude/channel,
// each behaving like Claude Code: a ring starts a turn that drains the queue (claim_next →
// complete until it answers empty), and a ring that arrives mid-turn is queued and starts
// one more turn after it (a wasted model turn when the queue is empty by then). The figure:
// notifications/claude/channel per todo (≈ 1.0 before one ring per idle agent; target
// ≤ 0.01), and the time from the push's first insert to the last todo claimed.
// Baseline in the same run, on a fresh endpoint of the same serve child: the same push
// drained by SESSIONS sessions that declared nothing (never rung), each looping on
// claim_next {wait_seconds} — the queue drained by agents that are always awake.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { DEFAULT_QUOTAS } from '../src/domain/quotas.js';
import { createTodos } from '../src/todos/create-bulk.js';
import { benchDatabase, vendBenchEndpoint } from './db.js';
import { startServe } from './serve.js';

const TODOS = Number(process.env.BENCH_RINGS_TODOS ?? 100_000);
const SESSIONS = 16;
/** Items per bulk create: the largest request the API takes. */
const CHUNK = 1000;
/** A bound on one drain, so a bench that stopped making progress ends (BENCH_RINGS_DRAIN_MINUTES, default 30). */
const DRAIN_TIMEOUT_MS = Number(process.env.BENCH_RINGS_DRAIN_MINUTES ?? 30) * 60_000;
/** How often a long drain says how far it got. */
const PROGRESS_EVERY_MS = 30_000;

interface Run {
  rings: number;
  pushMs: number;
  lastClaimMs: number;
  spent: number;
}

type Body = { todo?: { id: string }; empty?: boolean };

async function connectClient(base: string, credential: string, channel: boolean): Promise<Client> {
  const client = new Client(
    { name: 'bench-rings', version: '1' },
    channel ? { capabilities: { experimental: { 'claude/channel': {} } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Body> {
  return (await client.callTool({ name, arguments: args })).structuredContent as Body;
}

/** Counts claims; resolves `done` at the last one. */
function tally(total: number) {
  let claimed = 0;
  let finish = (_at: number) => {};
  const done = new Promise<number>((resolve) => (finish = resolve));
  return {
    done,
    claimed: () => claimed,
    add() {
      claimed += 1;
      if (claimed === total) finish(performance.now());
    },
  };
}

/** A session that works only when rung: each ring is a turn that drains the queue. */
function ringDriven(client: Client, count: ReturnType<typeof tally>) {
  const state = { rings: 0, turning: false, queued: false };
  const turn = async () => {
    state.turning = true;
    do {
      state.queued = false;
      for (;;) {
        const next = await call(client, 'claim_next', {});
        if (!next.todo) break;
        count.add();
        await call(client, 'complete', { id: next.todo.id });
      }
    } while (state.queued);
    state.turning = false;
  };
  client.fallbackNotificationHandler = async (n) => {
    if (n.method !== 'notifications/claude/channel') return;
    state.rings += 1;
    if (state.turning) state.queued = true;
    // A turn cut short by the bench closing the client (a timed-out drain) ends quietly.
    else void turn().catch(() => undefined);
  };
  return state;
}

/** A session that never waits for a ring: claim_next {wait_seconds} in a loop until the tally is full. */
async function longPoll(client: Client, count: ReturnType<typeof tally>, total: number): Promise<void> {
  while (count.claimed() < total) {
    const next = await call(client, 'claim_next', { wait_seconds: 2 });
    if (!next.todo) continue;
    count.add();
    await call(client, 'complete', { id: next.todo.id });
  }
}

async function push(pool: Pool, endpointId: string, humanId: string): Promise<void> {
  const deps = { db: pool, defaultLeaseSeconds: 300, quotas: { ...DEFAULT_QUOTAS, liveTodosPerEndpoint: 10 * TODOS } };
  const target = { endpointId, queues: ['inbox'], queuesLabel: 'inbox' };
  for (let at = 0; at < TODOS; at += CHUNK) {
    const todos = Array.from({ length: Math.min(CHUNK, TODOS - at) }, (_, i) => ({
      queue: 'inbox',
      title: `bulk ${at + i}`,
    }));
    await createTodos(deps, target, { humanId }, { todos });
  }
}

async function measure(pool: Pool, base: string, channel: boolean): Promise<Run> {
  const { endpointId, humanId, credential } = await vendBenchEndpoint(pool);
  const clients = await Promise.all(Array.from({ length: SESSIONS }, () => connectClient(base, credential, channel)));
  await waitForStreams(pool, endpointId);
  const count = tally(TODOS);
  const states = channel ? clients.map((c) => ringDriven(c, count)) : [];
  const polling = channel ? [] : clients.map((c) => longPoll(c, count, TODOS));
  const started = performance.now();
  await push(pool, endpointId, humanId);
  const pushMs = performance.now() - started;
  let timer: NodeJS.Timeout | undefined;
  const label = channel ? 'rung sessions' : 'long-poll';
  const progress = setInterval(
    () => process.stdout.write(`  ${label}: ${count.claimed()} of ${TODOS} claimed\n`),
    PROGRESS_EVERY_MS,
  );
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${count.claimed()} of ${TODOS} claimed after ${DRAIN_TIMEOUT_MS / 60_000} min`)),
      DRAIN_TIMEOUT_MS,
    );
  });
  try {
    const last = await Promise.race([count.done, timeout]);
    await Promise.all(polling);
    const spent = await pool.query<{ n: number }>(
      'SELECT coalesce(sum(ring_attempts), 0)::int AS n FROM todos WHERE endpoint_id = $1',
      [endpointId],
    );
    return {
      rings: states.reduce((n, s) => n + s.rings, 0),
      pushMs,
      lastClaimMs: last - started,
      spent: spent.rows[0]?.n ?? 0,
    };
  } finally {
    clearTimeout(timer);
    clearInterval(progress);
    // Closing the clients ends the long-polls of a timed-out drain with a rejection: expected.
    for (const p of polling) p.catch(() => undefined);
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function waitForStreams(pool: Pool, endpointId: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const res = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM mcp_sessions WHERE endpoint_id = $1 AND stream_open AND closed_at IS NULL',
      [endpointId],
    );
    if ((res.rows[0]?.n ?? 0) >= SESSIONS) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the streams did not open');
}

export async function runRingsBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 4 });
  const serve = await startServe(db.url, {
    SWITCHBOARD_DB_POOL_SIZE: String(SESSIONS),
    SWITCHBOARD_MCP_RATE: '1000000',
    SWITCHBOARD_MCP_BURST: '1000000',
  });
  try {
    process.stdout.write(
      `rings bench: ${TODOS} todos in bulk requests of ${CHUNK}, ${SESSIONS} sessions, serve child pid ${serve.pid}, on ${db.server}\n`,
    );
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    // Printed as soon as it is known: the baseline's drain may still time out on a loaded machine.
    const rung = await measure(pool, serve.url, true);
    process.stdout.write(
      `rung sessions     rings ${rung.rings} (spent ${rung.spent}), rings per todo ${(rung.rings / TODOS).toFixed(4)}` +
        ` (target ≤ 0.01), push ${s(rung.pushMs)}, last todo claimed ${s(rung.lastClaimMs)}\n`,
    );
    const polled = await measure(pool, serve.url, false);
    process.stdout.write(
      `long-poll (base)  push ${s(polled.pushMs)}, last todo claimed ${s(polled.lastClaimMs)}\n` +
        `last claim, rung ÷ long-poll ${(rung.lastClaimMs / polled.lastClaimMs).toFixed(2)}\n`,
    );
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
