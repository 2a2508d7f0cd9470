// A real PostgreSQL outage under `serve`: a private embedded PostgreSQL (never the
// machine's) is stopped and started again. Pins that a start against a stopped database
// listens at once, answers /healthz 200 and /readyz 503 with the reason, logs each retry
// and completes once PostgreSQL answers; and that a running server survives a restart of
// PostgreSQL: requests answer 503 `unavailable` meanwhile, then work again, and the
// LISTEN-based doorbell rings again after the bus reconnects.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { startEmbedded, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { createPool } from '../../src/db/pool.js';
import { startServer, type Server } from '../../src/main.js';
import { createTodo } from '../../src/todos/index.js';
import { vend } from '../mcp/harness.js';

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  await once(probe, 'close');
  assert.ok(address && typeof address === 'object');
  return address.port;
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

// Every private PostgreSQL this file starts, and their data folders. They are stopped and
// removed by the file's own `after`, which runs once each test's hooks (servers, pools,
// clients) have run: a test's hooks run in the order they were added, so a folder removed
// from a test's hook would be deleted under a PostgreSQL still writing its WAL (ENOTEMPTY,
// and a server left running in a deleted folder).
const started: EmbeddedPostgres[] = [];
const folders: string[] = [];
after(async () => {
  await Promise.all(started.map((pg) => pg.stop()));
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })));
});

async function startPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const pg = await startEmbedded({ dataDir, settings: { fsync: 'off' } });
  started.push(pg);
  return pg;
}

/** A private PostgreSQL that the test may stop and start; the port stays the same across restarts. */
async function privatePostgres(): Promise<{ dataDir: string; pg: EmbeddedPostgres }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-outage-'));
  folders.push(dataDir);
  return { dataDir, pg: await startPostgres(dataDir) };
}

function collectingLog(lines: string[]) {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
}

function configFor(url: string, port: number, instance: string, env: Record<string, string> = {}) {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: url,
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_INSTANCE_ID: instance,
    SWITCHBOARD_DB_POOL_SIZE: '4',
    ...env,
  });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  return parsed.config;
}

test('serve started against a stopped PostgreSQL listens, says why it is not ready, retries, and starts once PostgreSQL is up', async () => {
  const { dataDir, pg: first } = await privatePostgres();
  const { url, port: pgPort } = first;
  await first.stop();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const lines: string[] = [];
  let server: Server | null = null;
  // A failed assertion must not leave the start waiting forever: the abort ends it.
  const abort = new AbortController();
  const starting = startServer(configFor(url, port, 'outage-start'), collectingLog(lines), {
    backoff: { initialMs: 50, maxMs: 400 },
    signal: abort.signal,
  }).then((s) => (server = s));
  after(async () => {
    abort.abort(new Error('test over'));
    await (await starting.catch(() => null))?.stop();
  });

  // The listener is up before the database: alive, not ready, and the reason is named
  // once the first attempt has failed ("starting" before that).
  await until(
    async () =>
      (await fetch(`${base}/healthz`).then(
        (r) => r.status,
        () => 0,
      )) === 200,
    '/healthz',
  );
  await until(async () => (await getJson(`${base}/readyz`)).body.reason === 'database_unreachable', 'the reason');
  const notReady = await getJson(`${base}/readyz`);
  assert.equal(notReady.status, 503);
  assert.equal(notReady.body.ready, false);
  assert.equal(notReady.body.status, 'unavailable');
  assert.equal(notReady.body.reason, 'database_unreachable');
  assert.equal(notReady.body.detail, 'database unavailable');
  assert.doesNotMatch(JSON.stringify(notReady.body), /ECONNREFUSED|127\.0\.0\.1/, 'no error text or address');
  assert.ok(!Number.isNaN(Date.parse(String(notReady.body.since))));
  assert.doesNotMatch(JSON.stringify(notReady.body), /postgres:\/\//, 'no credentials in the reason');
  // Routes that need the database answer unavailable, not a crash or a hang.
  const api = await getJson(`${base}/api/v1/endpoints`);
  assert.equal(api.status, 503);
  assert.equal((api.body.error as { code?: string }).code, 'unavailable');
  // One clear line per attempt, naming where and why.
  await until(
    () =>
      lines.filter((l) =>
        new RegExp(`database not reachable at 127\\.0\\.0\\.1:${pgPort} \\(ECONNREFUSED\\); retrying in \\d`).test(l),
      ).length >= 2,
    'two retry lines',
  );
  assert.equal(server, null, 'the start is still waiting');

  // PostgreSQL comes up (same data dir, same port): the start completes.
  const second = await startPostgres(dataDir);
  assert.equal(second.port, pgPort);
  await starting;
  const ready = await getJson(`${base}/readyz`);
  assert.equal(ready.status, 200);
  assert.equal(ready.body.ready, true);
  assert.ok(lines.some((l) => l.includes(`database at 127.0.0.1:${pgPort} reachable again`)));

  // And it works: an agent creates a todo over MCP.
  const pool = createPool({ url, max: 2 });
  after(() => pool.end());
  const { credential } = await vend(pool);
  const client = new Client(
    { name: 'outage', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    }),
  );
  after(() => client.close());
  const created = (await client.callTool({
    name: 'create_todo',
    arguments: { queue: 'inbox', title: 'after the outage' },
  })) as {
    isError?: boolean;
    structuredContent: { todo?: { id: string } };
  };
  assert.ok(!created.isError, JSON.stringify(created));
  const id = created.structuredContent.todo?.id;
  assert.ok(id);
  assert.equal((await pool.query('SELECT state FROM todos WHERE id = $1', [id])).rows[0]?.state, 'pending');
});

test('a running serve survives a PostgreSQL restart: 503 unavailable meanwhile, then requests work and the doorbell rings again', async () => {
  const { dataDir, pg: first } = await privatePostgres();
  const { url, port: pgPort } = first;
  let pgNow: EmbeddedPostgres = first;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const lines: string[] = [];
  // Auth off (loopback): every /api/v1 request goes to the database, with no token to mint.
  const server = await startServer(
    configFor(url, port, 'outage-run', { SWITCHBOARD_AUTH: 'off' }),
    collectingLog(lines),
  );
  after(() => server.stop());
  const pool = createPool({ url, max: 2 });
  after(() => pool.end());
  const { endpoint, humanId, credential } = await vend(pool);
  const auth = { authorization: `Bearer ${credential}` };
  const apiUrl = `${base}/api/v1/endpoints`;

  // An agent with its notification stream open on this instance.
  const heard: string[] = [];
  const client = new Client(
    { name: 'outage', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    const todoId = (n.params as { meta?: { todo_id?: string } }).meta?.todo_id;
    if (n.method === 'notifications/claude/channel' && todoId) heard.push(todoId);
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: auth } });
  await client.connect(transport);
  after(() => client.close());
  await until(
    async () =>
      (await pool.query('SELECT stream_open FROM mcp_sessions WHERE id = $1', [transport.sessionId])).rows[0]
        ?.stream_open === true,
    'the stream',
  );
  const ring = async (title: string) => {
    const { todo } = await createTodo(
      { db: pool, defaultLeaseSeconds: 300 },
      { endpointId: endpoint.id },
      { humanId },
      { queue: 'inbox', title },
    );
    return todo.id;
  };
  const before = await ring('before the restart');
  await until(() => heard.includes(before), 'a ring before the restart');
  // Answered and done, so the session is idle and the todo after the restart rings it.
  await client.callTool({ name: 'claim', arguments: { id: before } });
  await client.callTool({ name: 'complete', arguments: { id: before } });

  // PostgreSQL goes away (fast shutdown terminates every connection, LISTEN included).
  await pgNow.stop();
  await until(async () => (await getJson(`${base}/readyz`)).body.reason === 'database_unreachable', '/readyz 503');
  const down = await getJson(`${base}/readyz`);
  assert.equal(down.status, 503);
  assert.equal(down.body.detail, 'database unavailable');
  assert.equal((await getJson(`${base}/healthz`)).status, 200);
  const api = await getJson(apiUrl);
  assert.equal(api.status, 503, JSON.stringify(api.body));
  assert.equal((api.body.error as { code?: string }).code, 'unavailable');
  // The MCP edge: when the instance has to read the credential (it reuses an answer for
  // up to 2 s), that read fails and the POST itself answers 503 unavailable; when it
  // reuses one, the verb's own query fails and the call answers the error `unavailable`.
  const during = await client.callTool({ name: 'list_todos', arguments: {} }).then(
    (result) => JSON.stringify(result),
    (err: Error & { code?: number }) => {
      assert.equal(err.code, 503);
      return err.message;
    },
  );
  assert.match(during, /\\?"code\\?":\\?"unavailable\\?"/);

  // PostgreSQL is back on the same port: ready again, requests work, the doorbell rings.
  pgNow = await startPostgres(dataDir);
  assert.equal(pgNow.port, pgPort);
  await until(async () => (await getJson(`${base}/readyz`)).status === 200, '/readyz 200 again');
  assert.equal((await getJson(apiUrl)).status, 200);
  await until(() => lines.some((l) => l.includes('LISTEN connection restored')), 'the bus reconnected');
  const afterRestart = await ring('after the restart');
  await until(() => heard.includes(afterRestart), 'a ring after the restart');
  const listed = (await client.callTool({ name: 'list_todos', arguments: {} })) as { isError?: boolean };
  assert.ok(!listed.isError, JSON.stringify(listed));
});
