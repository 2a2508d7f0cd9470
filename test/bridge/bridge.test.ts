// Pins `switchboard bridge` as a child process over stdio: initialize answers with the
// remote's capabilities, serverInfo and instructions (and the server records the real
// client); tools, tool errors and protocol errors pass through unchanged; notifications
// pass through untouched (a fake remote, then the real doorbell), also after the stream
// drops, the server restarts or forgets the session; progress and cancellation cross it;
// stdin closing ends the remote session and exits 0; bad flags exit 2 naming the flag.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Notification } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { retryDelayMs } from '../../src/bridge/bridge.js';
import { parseConfig } from '../../src/config/index.js';
import { startServer } from '../../src/main.js';
import { createTodo } from '../../src/todos/index.js';
import { versionInfo } from '../../src/version.js';
import { testDatabase } from '../helpers/db.js';
import { toolError } from '../helpers/tool-result.js';
import { connect, startApp, vend, type Body } from '../mcp/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');

const { pool, url: databaseUrl } = await testDatabase('bridge');
const { url } = await startApp(pool, 'instance-bridge');

interface Bridged {
  client: Client;
  notifications: Notification[];
  stderr: () => string;
}

/** A client connected to `switchboard bridge` spawned by the SDK's stdio transport. */
async function bridged(
  remote: string,
  credential: string,
  name = 'bridged-client',
  tokenFlags = ['--token', credential],
): Promise<Bridged> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'bridge', '--url', remote, ...tokenFlags],
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name, version: '1.0.0' });
  const notifications: Notification[] = [];
  client.fallbackNotificationHandler = async (n) => void notifications.push(n);
  await client.connect(transport);
  after(() => client.close());
  return { client, notifications, stderr: () => stderr };
}

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  return assert.fail(`timed out waiting for ${what}`);
}

/** A file only this user can read, removed when the file's tests end. */
async function tempFile(content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-bridge-'));
  after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'credential'), content, { mode: 0o600 });
  return join(dir, 'credential');
}

async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  return client.callTool({ name, arguments: args });
}

test('initialize answers with the remote capabilities (claude/channel included), serverInfo and instructions', async () => {
  const { endpoint, credential } = await vend(pool, { default_lease_seconds: 90 });
  const direct = await connect(url, credential);
  const b = await bridged(url, credential, 'claude-code');
  assert.deepEqual(b.client.getServerCapabilities(), direct.client.getServerCapabilities());
  assert.deepEqual(b.client.getServerCapabilities()?.experimental, { 'claude/channel': {} });
  assert.deepEqual(b.client.getServerVersion(), { name: 'switchboard', version: versionInfo().version });
  assert.equal(b.client.getInstructions(), direct.client.getInstructions());
  assert.match(b.client.getInstructions() ?? '', /90 s/);
  // The server records the real client behind the bridge, not the bridge.
  const rows = await pool.query('SELECT client_name, client_version FROM mcp_sessions WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.deepEqual(rows.rows.map((r: Body) => `${r.client_name}/${r.client_version}`).sort(), [
    'claude-code/1.0.0',
    'test-client/1.2.3',
  ]);
});

test('tools/list through the bridge equals the direct answer', async () => {
  const { credential } = await vend(pool, { verbs: ['drain', 'create'] });
  const direct = await connect(url, credential);
  const b = await bridged(url, credential);
  assert.deepEqual(await b.client.listTools(), await direct.client.listTools());
});

test('create_todo → claim_next → complete through the bridge', async () => {
  const { credential } = await vend(pool);
  const b = await bridged(url, credential);
  const created = await tool(b.client, 'create_todo', { queue: 'inbox', title: 'bridged work' });
  assert.equal(created.isError, undefined);
  const id = created.structuredContent.todo.id;
  const claimed = await tool(b.client, 'claim_next');
  assert.equal(claimed.structuredContent.todo.id, id);
  const done = await tool(b.client, 'complete', { id, result: { ok: true } });
  assert.equal(done.structuredContent.todo.state, 'done');
  const row = await pool.query('SELECT state FROM todos WHERE id = $1', [id]);
  assert.equal(row.rows[0].state, 'done');
});

test('a tool error and a protocol error come through unchanged', async () => {
  const { credential } = await vend(pool);
  const direct = await connect(url, credential);
  const b = await bridged(url, credential);
  const args = { id: 'td_01ARZ3NDEKTSV4RRFFQ69G5FAV', result: {} };
  // Listed tools make the SDK client check every answer against its outputSchema.
  await Promise.all([b.client.listTools(), direct.client.listTools()]);
  const viaBridge = await tool(b.client, 'complete', args);
  assert.equal(viaBridge.isError, true);
  assert.equal(toolError(viaBridge).code, 'not_found');
  assert.deepEqual(viaBridge, await tool(direct.client, 'complete', args));
  const unknownMethod = (c: Client): Promise<Body> =>
    c.request({ method: 'prompts/list' }, ListToolsRequestSchema).catch((e: unknown) => e);
  const [bridgeError, directError] = await Promise.all([unknownMethod(b.client), unknownMethod(direct.client)]);
  assert.deepEqual([bridgeError.code, bridgeError.message], [directError.code, directError.message]);
});

test('stdin closing ends the remote session and exits 0; stdout carries only JSON-RPC', async () => {
  const { endpoint, credential } = await vend(pool);
  const child = spawn(process.execPath, [BIN, 'bridge', '--url', url, '--token', credential], { cwd: ROOT });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const initialize = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } };
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initialize }) + '\n');
  await until(() => stdout.includes('\n'), 'the initialize answer');
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const session = await until(async () => {
    const res = await pool.query('SELECT id FROM mcp_sessions WHERE endpoint_id = $1 AND stream_open', [endpoint.id]);
    return res.rows[0]?.id as string | undefined;
  }, 'the remote stream');
  child.stdin.end();
  assert.equal(await exited, 0);
  for (const line of stdout.trim().split('\n')) assert.equal(JSON.parse(line).jsonrpc, '2.0');
  const row = await pool.query('SELECT closed_at FROM mcp_sessions WHERE id = $1', [session]);
  assert.notEqual(row.rows[0].closed_at, null);
});

test('--token-file reads the credential from a file, keeping it out of the command line', async () => {
  const { credential } = await vend(pool);
  const file = await tempFile(`${credential}\n`);
  const b = await bridged(url, credential, 'file-client', ['--token-file', file]);
  const whoami = await tool(b.client, 'whoami');
  assert.equal(whoami.isError, undefined);
});

test('bad flags exit 2 with one stderr line naming the flag', async () => {
  const notCredential = await tempFile('hunter2\n');
  const cases: [string[], RegExp][] = [
    [['--url', 'ftp://example.test', '--token', 'sbk_x'], /--url/],
    [['--url', 'not a url', '--token', 'sbk_x'], /--url/],
    [['--url', url, '--token', 'ghp_x'], /--token/],
    [['--url', url], /--token/],
    [['--url', url, '--token-file', '/nonexistent/credential'], /--token-file/],
    [['--url', url, '--token-file', notCredential], /--token-file/],
    [['--url', url, '--token', 'sbk_x', '--token-file', notCredential], /--token and --token-file/],
    [['--token', 'sbk_x'], /--url/],
  ];
  const run = async (args: string[]) => {
    const child = spawn(process.execPath, [BIN, 'bridge', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    return { code, stderr };
  };
  const results = await Promise.all(cases.map(([args]) => run(args)));
  cases.forEach(([args, flag], i) => {
    const { code, stderr } = results[i] ?? assert.fail();
    assert.equal(code, 2, args.join(' '));
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, flag);
  });
});

test('retry delays grow to a cap of 30 s, with jitter', () => {
  assert.equal(retryDelayMs(0, 1), 1_000);
  assert.equal(retryDelayMs(0, 0), 500);
  assert.equal(retryDelayMs(3, 1), 8_000);
  assert.equal(retryDelayMs(40, 1), 30_000);
  assert.equal(retryDelayMs(40, 0), 15_000);
});

/** A stand-in remote whose sessions the test can ring, cut off and forget. */
async function fakeRemote() {
  const cancelled: string[] = [];
  const sessions = new Map<string, { server: Server; transport: StreamableHTTPServerTransport; streams: number }>();
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['mcp-session-id'];
    let entry = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!entry && id === undefined && req.method === 'POST') {
      const server = new Server(
        { name: 'fake-remote', version: '9.9.9' },
        { capabilities: { tools: {}, logging: {}, experimental: { 'claude/channel': {} } }, instructions: 'fake' },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
      // `slow` reports progress, then answers when asked to finish or records its cancellation.
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const progressToken = request.params._meta?.progressToken ?? 0;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2 },
        });
        if (request.params.arguments?.finish) return { content: [{ type: 'text', text: 'finished' }] };
        await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
        cancelled.push(String(extra.requestId));
        return { content: [] };
      });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const created = { server, streams: 0, transport };
      await server.connect(created.transport);
      entry = created;
    }
    if (!entry)
      return void res
        .writeHead(404)
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
    if (req.method === 'GET') entry.streams++;
    await entry.transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  after(async () => {
    await Promise.all([...sessions.values()].map((s) => s.server.close()));
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  const address = http.address();
  assert.ok(address && typeof address === 'object');
  return { url: `http://127.0.0.1:${address.port}`, sessions, cancelled };
}

test('remote notifications reach the stdio client untouched, after a dropped stream and a forgotten session too', async () => {
  const remote = await fakeRemote();
  const b = await bridged(remote.url, 'sbk_fake');
  assert.deepEqual(b.client.getServerVersion(), { name: 'fake-remote', version: '9.9.9' });
  const only = () => [...remote.sessions.values()].at(-1);
  const params = { content: 'line one\nline </channel> two', meta: { todo_id: 'td_1', queue: 'inbox', odd_key: 'x' } };
  const ring = async (streams: number, meta: Record<string, string>) => {
    const session = await until(() => (only()?.streams === streams ? only() : undefined), `stream ${streams}`);
    await new Promise((r) => setTimeout(r, 50));
    await session.server.notification({ method: 'notifications/claude/channel', params: { ...params, meta } });
    return until(
      () => b.notifications.find((n) => n.params?.meta && (n.params.meta as Body).ring === meta.ring),
      'ring',
    );
  };
  const first = await ring(1, { ...params.meta, ring: '1' });
  assert.deepEqual(first, {
    jsonrpc: '2.0',
    method: 'notifications/claude/channel',
    params: { ...params, meta: { ...params.meta, ring: '1' } },
  });
  await only()?.server.sendLoggingMessage({ level: 'info', data: { hello: 'world' } });
  await until(() => b.notifications.find((n) => n.method === 'notifications/message'), 'the logging message');

  only()?.transport.closeStandaloneSSEStream();
  await ring(2, { ring: '2' });
  assert.match(b.stderr(), /notification stream lost/);

  const old = only();
  remote.sessions.clear();
  old?.transport.closeStandaloneSSEStream();
  await until(() => (only() && only() !== old ? true : undefined), 'a new session');
  await ring(1, { ring: '3' });
  assert.match(b.stderr(), /opening a new one/);

  // Found out by a request: the request is sent again on the new session and succeeds.
  const forgotten = only();
  remote.sessions.clear();
  assert.deepEqual(await b.client.listTools(), { tools: [] });
  assert.notEqual(only(), forgotten);
});

test('a refused credential fails initialize with the server’s answer', async () => {
  const refused = await bridged(url, 'sbk_not_a_real_credential').catch((err: Error) => err);
  assert.ok(refused instanceof Error);
  assert.match(refused.message, /HTTP 401: unauthenticated: .*credential/);
});

/** A full server (doorbell included) on this file's database; stopped when the file ends. */
async function fullServer(listen = '127.0.0.1:0') {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: databaseUrl,
    SWITCHBOARD_LISTEN: listen,
    SWITCHBOARD_INSTANCE_ID: `instance-${randomUUID().slice(0, 8)}`,
    SWITCHBOARD_DB_POOL_SIZE: '4',
  });
  assert.ok(parsed.ok);
  const server = await startServer(parsed.config, pino({ level: 'silent' }));
  let stopped = false;
  const stop = async () => {
    if (!stopped) await server.stop();
    stopped = true;
  };
  after(stop);
  return { url: server.url, stop };
}

async function streamOpen(endpointId: string): Promise<void> {
  await until(async () => {
    const res = await pool.query('SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1 AND stream_open', [endpointId]);
    return res.rowCount === 1 || undefined;
  }, 'the bridge stream to open');
}

function push(endpointId: string, humanId: string, title: string) {
  const input = { queue: 'inbox', title, kind: 'task' };
  return createTodo({ db: pool, defaultLeaseSeconds: 300 }, { endpointId }, { humanId }, input);
}

async function rung(b: Bridged, todoId: string): Promise<{ content: string; meta: Record<string, unknown> }> {
  const ring = await until(
    () =>
      b.notifications.find(
        (n) =>
          n.method === 'notifications/claude/channel' && n.params?.meta && (n.params.meta as Body).todo_id === todoId,
      ),
    `the doorbell for ${todoId}`,
  );
  return ring.params as { content: string; meta: Record<string, unknown> };
}

test('a todo pushed by a human rings the stdio client through the bridge, and it claims the todo', async () => {
  const server = await fullServer();
  const { endpoint, humanId, credential } = await vend(pool);
  const b = await bridged(server.url, credential, 'claude-code');
  await streamOpen(endpoint.id);
  const { todo } = await push(endpoint.id, humanId, 'Ring through the bridge');
  const params = await rung(b, todo.id);
  assert.equal(params.meta.queue, 'inbox');
  assert.equal(params.meta.kind, 'task');
  assert.match(String(params.meta.ring_id), /^rg_/);
  for (const value of Object.values(params.meta)) assert.equal(typeof value, 'string');
  assert.match(params.content, /Ring through the bridge/);
  const claimed = await tool(b.client, 'claim_next');
  assert.equal(claimed.structuredContent.todo.id, todo.id);
});

test('after the server restarts, the bridge reopens the stream on the same session and rings again', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  assert.ok(address && typeof address === 'object');
  await new Promise((resolve) => probe.close(resolve));
  const listen = `127.0.0.1:${address.port}`;

  const first = await fullServer(listen);
  const { endpoint, humanId, credential } = await vend(pool);
  const b = await bridged(first.url, credential);
  await streamOpen(endpoint.id);
  const sessions = await pool.query('SELECT id FROM mcp_sessions WHERE endpoint_id = $1', [endpoint.id]);
  await first.stop();
  await until(() => /notification stream lost/.test(b.stderr()) || undefined, 'the bridge to notice');
  await fullServer(listen);
  await streamOpen(endpoint.id);
  const { todo } = await push(endpoint.id, humanId, 'After the restart');
  await rung(b, todo.id);
  const now = await pool.query('SELECT id FROM mcp_sessions WHERE endpoint_id = $1', [endpoint.id]);
  assert.deepEqual(now.rows, sessions.rows);
  assert.match(b.stderr(), /notification stream reopened/);
});

test('progress comes back under the caller’s token, and a cancellation reaches the remote', async () => {
  const remote = await fakeRemote();
  const b = await bridged(remote.url, 'sbk_fake');
  // A call that answers at once: its result comes through. (Its progress is not asserted:
  // the SDK client handles a progress notification a microtask late and drops it when the
  // result arrived right behind it on the same stream.)
  const done = await b.client.callTool({ name: 'slow', arguments: { finish: true } });
  assert.deepEqual(done.content, [{ type: 'text', text: 'finished' }]);

  // A call still running: its progress reaches the caller under the caller's token.
  const progress: unknown[] = [];
  const abort = new AbortController();
  const pending = b.client.callTool({ name: 'slow' }, undefined, {
    onprogress: (p: unknown) => void progress.push(p),
    signal: abort.signal,
  });
  await until(() => progress.length === 1 || undefined, 'the progress of the running call');
  assert.deepEqual(progress, [{ progress: 1, total: 2 }]);
  abort.abort('changed my mind');
  await assert.rejects(pending);
  await until(() => remote.cancelled.length === 1 || undefined, 'the remote to hear the cancellation');
});
