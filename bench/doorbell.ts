// Doorbell latency: from the commit of a new todo to its notifications/claude/channel
// reaching a connected client, p50 and p99, with the server(s) as `serve` child processes.
//
// - one instance: the client's stream is on A;
// - two instances: the client's stream is on B; the ring is claimed by whichever instance
//   wins the todo's row lock and, when that is A, forwarded to B with a ring notice.
// Baseline in the same run: a bare PostgreSQL NOTIFY from a committed statement to a
// LISTEN connection in this process — the floor under any cross-process signal here.
// The clock starts before the INSERT is sent, so each figure includes its round trip.
// - a waiter: claim_next {wait_seconds} on B, woken by the todo's todo_ready, answering
//   with the claimed todo.
// Targets: one instance p50 ≤ 10 ms and p99 ≤ 50 ms; two instances and a waiter p99 ≤ 100 ms.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { createPool, type Pool } from '../src/db/pool.js';
import { createTodo } from '../src/todos/index.js';
import { benchDatabase, vendBenchEndpoint } from './db.js';
import { startServe } from './serve.js';

const RINGS = Number(process.env.BENCH_RINGS ?? 300);

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const fmt = (ms: number[]) => `p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms`;

/** Connects a client to `base`; records when each todo's ring arrives and wakes its waiter. */
async function listener(base: string, credential: string, pool: Pool) {
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  // It declares claude/channel: the doorbell rings only such sessions.
  const client = new Client(
    { name: 'bench', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    const todoId = (n.params as { meta?: { todo_id?: string } } | undefined)?.meta?.todo_id;
    if (n.method !== 'notifications/claude/channel' || !todoId) return;
    arrivals.set(todoId, performance.now());
    waiters.get(todoId)?.();
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  for (let i = 0; i < 200; i++) {
    const res = await pool.query<{ stream_open: boolean }>('SELECT stream_open FROM mcp_sessions WHERE id = $1', [
      transport.sessionId,
    ]);
    if (res.rows[0]?.stream_open) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  /** When the ring for `todoId` arrived (it may already have, before the INSERT returned). */
  const arrivalOf = (todoId: string) =>
    new Promise<number>((resolve, fail) => {
      const known = arrivals.get(todoId);
      if (known !== undefined) return resolve(known);
      const timer = setTimeout(() => fail(new Error(`no ring for ${todoId} within 5 s`)), 5000);
      waiters.set(todoId, () => {
        clearTimeout(timer);
        resolve(arrivals.get(todoId) ?? performance.now());
      });
    });
  return { client, arrivalOf };
}

/**
 * `rings` commit → client latencies (after 10 warm-up rings) to one SDK client of a fresh
 * endpoint on `base`; the client claims and completes each rung todo before the next push.
 */
export async function measureRings(pool: Pool, base: string, rings = RINGS): Promise<number[]> {
  const { endpointId, humanId, credential } = await vendBenchEndpoint(pool);
  const { client, arrivalOf } = await listener(base, credential, pool);
  const deps = { db: pool, defaultLeaseSeconds: 300 };
  const samples: number[] = [];
  try {
    for (let i = 0; i < rings + 10; i++) {
      const started = performance.now();
      const { todo } = await createTodo(deps, { endpointId }, { humanId }, { queue: 'inbox', title: `bell ${i}` });
      const arrived = await arrivalOf(todo.id);
      if (i >= 10) samples.push(arrived - started); // the first 10 warm up
      // Answered and done, as an agent would: a session with an unanswered ring or a claim
      // is not rung for the next todo (docs/design/doorbell-acknowledgement.md, "Who is rung").
      await client.callTool({ name: 'claim', arguments: { id: todo.id } });
      await client.callTool({ name: 'complete', arguments: { id: todo.id } });
    }
  } finally {
    await client.close();
  }
  return samples;
}

/**
 * Long-poll waits: a client with no use for its stream calls claim_next {wait_seconds} on
 * `base`; once the call has had time to start waiting, a todo is created (through the
 * use case, so its todo_ready comes from this process's commit, heard by the server over
 * the bus) and the clock runs from before the INSERT to the claim's answer. Each claimed
 * todo is completed before the next round.
 */
export async function measureWaiters(pool: Pool, base: string, rounds = RINGS): Promise<number[]> {
  const { endpointId, humanId, credential } = await vendBenchEndpoint(pool);
  const client = new Client({ name: 'bench-waiter', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    }),
  );
  const deps = { db: pool, defaultLeaseSeconds: 300 };
  const samples: number[] = [];
  try {
    for (let i = 0; i < rounds + 10; i++) {
      const answered = client
        .callTool({ name: 'claim_next', arguments: { wait_seconds: 10 } })
        .then((r) => ({ at: performance.now(), body: r.structuredContent as { todo?: { id: string } } }));
      // The call's first attempt finds nothing; give it time to be waiting (a bench, not a test).
      await new Promise((r) => setTimeout(r, 30));
      const started = performance.now();
      const { todo } = await createTodo(deps, { endpointId }, { humanId }, { queue: 'inbox', title: `wait ${i}` });
      const { at, body } = await answered;
      if (body.todo?.id !== todo.id) throw new Error(`the waiter claimed ${JSON.stringify(body)}, not ${todo.id}`);
      await client.callTool({ name: 'complete', arguments: { id: todo.id } });
      if (i >= 10) samples.push(at - started);
    }
  } finally {
    await client.close();
  }
  return samples;
}

/** The floor: a committed pg_notify reaching a LISTEN connection of this process. */
async function measureNotify(url: string, pool: Pool): Promise<number[]> {
  const listen = new pg.Client({ connectionString: url });
  await listen.connect();
  await listen.query('LISTEN bench_floor');
  const samples: number[] = [];
  try {
    for (let i = 0; i < RINGS + 10; i++) {
      const started = performance.now();
      const arrived = new Promise<void>((resolve) => listen.once('notification', () => resolve()));
      await pool.query(`SELECT pg_notify('bench_floor', $1)`, [String(i)]);
      await arrived;
      if (i >= 10) samples.push(performance.now() - started);
    }
  } finally {
    await listen.end();
  }
  return samples;
}

export async function runDoorbellBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 4 });
  const a = await startServe(db.url, { SWITCHBOARD_INSTANCE_ID: 'bench-a' });
  const b = await startServe(db.url, { SWITCHBOARD_INSTANCE_ID: 'bench-b' });
  try {
    process.stdout.write(`doorbell bench: ${RINGS} rings each, serve children A and B, on ${db.server}\n`);
    const floor = await measureNotify(db.url, pool);
    const one = await measureRings(pool, a.url);
    const two = await measureRings(pool, b.url);
    const waiter = await measureWaiters(pool, b.url);
    process.stdout.write(
      `floor (NOTIFY → LISTEN)          ${fmt(floor)}\n` +
        `one instance (commit → client)   ${fmt(one)}   (target p50 ≤ 10, p99 ≤ 50)\n` +
        `two instances (stream on B)      ${fmt(two)}   (target p99 ≤ 100)\n` +
        `waiter on B (commit → claimed)   ${fmt(waiter)}   (target p99 ≤ 100)\n` +
        `ratio to floor, p50              one ${(percentile(one, 50) / percentile(floor, 50)).toFixed(1)}×, ` +
        `two ${(percentile(two, 50) / percentile(floor, 50)).toFixed(1)}×\n`,
    );
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await pool.end();
    await db.close();
  }
}
