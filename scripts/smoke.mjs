// A runtime smoke test, for the Node.js versions CI does not run the whole suite on
// (.ci/run): the compiled CLI says its version, `serve` starts from dist/ on a database of
// its own (on SWITCHBOARD_TEST_DATABASE_URL's server) and becomes ready, an endpoint is
// vended over the API, and one todo is created, claimed and completed over /mcp as a
// client would (JSON-RPC over Streamable HTTP, with a session), then read back as done
// over the API. Everything goes through the real CLI and HTTP; nothing is imported from
// src/. Exits non-zero, saying which step, when any step fails.
//
//   SWITCHBOARD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node scripts/smoke.mjs
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'switchboard.js');
const admin = process.env.SWITCHBOARD_TEST_DATABASE_URL;
if (!admin) {
  process.stderr.write('smoke: set SWITCHBOARD_TEST_DATABASE_URL (a superuser URL)\n');
  process.exit(2);
}
const say = (line) => process.stdout.write(`smoke (node ${process.version}): ${line}\n`);

function free() {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function withAdmin(sql) {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

// 1. The CLI runs on this Node and reports the package's version.
const version = spawnSync(process.execPath, [bin, 'version', '--json'], { encoding: 'utf8' });
if (version.status !== 0) throw new Error(`switchboard version exited ${version.status}: ${version.stderr}`);
say(`switchboard version ${JSON.parse(version.stdout).version}`);

const database = `sb_smoke_${randomBytes(4).toString('hex')}`;
const url = new URL(admin);
url.pathname = `/${database}`;
await withAdmin(`CREATE DATABASE ${database}`);

const port = await free();
const base = `http://127.0.0.1:${port}`;
const serve = spawn(process.execPath, [bin, 'serve'], {
  env: {
    PATH: process.env.PATH,
    SWITCHBOARD_DATABASE_URL: url.toString(),
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_AUTH: 'off',
    SWITCHBOARD_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'pipe'],
});
serve.stderr.setEncoding('utf8').on('data', (chunk) => process.stderr.write(chunk));
const exited = new Promise((done) => serve.on('exit', (code, signal) => done(code ?? signal)));

async function json(method, path, body, headers = {}) {
  const res = await globalThis.fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** One JSON-RPC message from a /mcp answer, whether sent as JSON or as an SSE stream. */
function rpcAnswer(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return JSON.parse(trimmed);
  const data = trimmed
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)))
    .find((m) => 'result' in m || 'error' in m);
  if (!data) throw new Error(`no JSON-RPC answer in: ${text}`);
  return data;
}

let code = 0;
try {
  // 2. serve becomes ready: migrations applied on the empty database.
  const started = Date.now();
  for (;;) {
    const ready = await globalThis.fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (serve.exitCode !== null) throw new Error(`serve exited ${serve.exitCode} before it was ready`);
    if (Date.now() - started > 120_000) throw new Error(`serve did not become ready at ${base}`);
    await sleep(200);
  }
  say(`serve ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // 3. An endpoint with one queue, vended over the API (auth is off on loopback).
  const vended = await json('POST', '/api/v1/endpoints', { name: 'smoke', queues: ['inbox'] });
  if (vended.status !== 201) throw new Error(`vending an endpoint answered ${vended.status}: ${vended.text}`);
  const { credential } = JSON.parse(vended.text);

  // 4. An MCP session: initialize, initialized, then tools/call.
  const mcpHeaders = {
    authorization: `Bearer ${credential}`,
    accept: 'application/json, text/event-stream',
  };
  const init = await json(
    'POST',
    '/mcp',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'smoke', version: '1' } },
    },
    mcpHeaders,
  );
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${init.text}`);
  const initialized = rpcAnswer(init.text);
  if (!initialized.result) throw new Error(`initialize failed: ${init.text}`);
  const session = init.headers.get('mcp-session-id');
  const protocol = initialized.result.protocolVersion;
  const inSession = {
    ...mcpHeaders,
    ...(session ? { 'mcp-session-id': session } : {}),
    'mcp-protocol-version': protocol,
  };
  const note = await json('POST', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, inSession);
  if (note.status >= 300) throw new Error(`notifications/initialized answered ${note.status}: ${note.text}`);
  say(`MCP session open (protocol ${protocol})`);

  let nextId = 2;
  async function call(name, args) {
    const res = await json(
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
      inSession,
    );
    if (res.status !== 200) throw new Error(`${name} answered HTTP ${res.status}: ${res.text}`);
    const answer = rpcAnswer(res.text);
    if (answer.error || answer.result?.isError) throw new Error(`${name} failed: ${res.text}`);
    return answer.result.structuredContent;
  }

  // 5. One todo: created, claimed, completed.
  const created = await call('create_todo', { queue: 'inbox', title: 'smoke test todo' });
  const id = created.todo.id;
  const claimed = await call('claim_next', { queue: 'inbox' });
  if (claimed.empty || claimed.todo?.id !== id)
    throw new Error(`claim_next did not hand out ${id}: ${JSON.stringify(claimed)}`);
  const completed = await call('complete', { id, lease_token: claimed.lease_token, summary: 'smoke' });
  if (completed.todo.state !== 'done') throw new Error(`complete left ${id} ${completed.todo.state}`);
  say(`todo ${id} created, claimed and completed over /mcp`);

  // 6. The API agrees.
  const shown = await json('GET', `/api/v1/todos/${id}`);
  if (shown.status !== 200) throw new Error(`GET /api/v1/todos/${id} answered ${shown.status}: ${shown.text}`);
  const shownTodo = JSON.parse(shown.text);
  const status = shownTodo.todo?.state ?? shownTodo.state;
  if (status !== 'done') throw new Error(`the API says ${id} is ${status}`);
  say('the API reads it back as done');
} catch (err) {
  process.stderr.write(`smoke (node ${process.version}) failed: ${err instanceof Error ? err.message : String(err)}\n`);
  code = 1;
} finally {
  serve.kill('SIGTERM');
  const stopped = await exited;
  if (stopped !== 0) {
    process.stderr.write(`smoke: serve exited ${stopped} on SIGTERM\n`);
    code = 1;
  }
  await withAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
if (code === 0) say('passed');
process.exit(code);
