// Pins MCP 2026-07-28 on /mcp (docs/design/mcp-surface.md, "MCP 2026-07-28: stateless
// requests") through the official v2 client pinned to that revision: server/discover,
// tools/list without the session verbs, tool calls under a fresh per-request id, the
// session verbs refused saying why, the bearer and the envelope checked on every request,
// progress on a waiting call's own response stream, subscriptions/listen; and that a
// 2025-11-25 session beside it is unchanged.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { testDatabase } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { connect, ok, raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_stateless');
const a = await startApp(pool, 'stateless-a');

const REVISION = '2026-07-28';

/** The official v2 client, pinned to 2026-07-28 (no probe, no fallback to initialize). */
async function modern(url: string, credential: string): Promise<Client> {
  const client = new Client(
    { name: 'v2-client', version: '2.4.0' },
    { versionNegotiation: { mode: { pin: REVISION } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  after(() => client.close());
  return client;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool bodies are checked field by field
type Body = any;

async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const result = await client.callTool({ name, arguments: args });
  const first = (result.content as { type: string; text?: string }[])[0];
  assert.equal(first?.type, 'text');
  const body = JSON.parse(first.text ?? '');
  return { ...body, ...(result.isError ? { isError: true } : {}) };
}

/** A raw 2026-07-28 request: the envelope in _meta and the standard headers. */
function envelope(method: string, params: Record<string, unknown> = {}, id = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': REVISION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
}

function modernHeaders(credential: string, method: string, name?: string): Record<string, string> {
  return {
    authorization: `Bearer ${credential}`,
    'mcp-protocol-version': REVISION,
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  };
}

test('the v2 client pinned to 2026-07-28 discovers the server and lists the tools that need no session', async () => {
  const v = await vend(pool);
  const client = await modern(a.url, v.credential);
  assert.equal(client.getServerVersion()?.name, 'switchboard');
  assert.match(client.getInstructions() ?? '', /claim_next with wait_seconds/);
  assert.match(client.getInstructions() ?? '', /lease_token/);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const verb of ['claim_next', 'complete', 'whoami', 'create_todo', 'get_doorbell_test']) {
    assert.ok(names.includes(verb), `${verb} is listed`);
  }
  for (const verb of ['next_message', 'ack_message', 'test_doorbell']) {
    assert.ok(!names.includes(verb), `${verb} needs a session and is not listed`);
  }
  const rows = await pool.query('SELECT count(*)::int AS n FROM mcp_sessions WHERE endpoint_id = $1', [v.endpoint.id]);
  assert.equal(rows.rows[0].n, 0, 'no session row is written');
});

test('each stateless call acts under a fresh mr_ id that names no session', async () => {
  const v = await vend(pool);
  const client = await modern(a.url, v.credential);
  const first = await tool(client, 'whoami');
  const second = await tool(client, 'whoami');
  assert.equal(first.endpoint.slug, v.endpoint.slug);
  assert.match(first.session_id, /^mr_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.notEqual(first.session_id, second.session_id);
  const created = await tool(client, 'create_todo', { queue: 'inbox', title: 'stateless work' });
  const claimed = await tool(client, 'claim', { id: created.todo.id });
  assert.equal(claimed.todo.id, created.todo.id);
  assert.match(claimed.todo.owner_session_id, /^mr_/);
  const sessions = await tool(client, 'list_sessions');
  assert.deepEqual(sessions.sessions, []);
});

test('a session verb called statelessly is failed_precondition saying why, with nothing done', async () => {
  const v = await vend(pool);
  const client = await modern(a.url, v.credential);
  for (const [verb, args] of [
    ['next_message', {}],
    ['ack_message', { message_id: '00000000-0000-0000-0000-000000000000' }],
    ['test_doorbell', {}],
  ] as const) {
    const body = await tool(client, verb, args);
    assert.equal(body.isError, true);
    assert.equal(body.error.code, 'failed_precondition', JSON.stringify(body));
    assert.equal(body.error.verb, verb);
    assert.match(body.error.message, /MCP 2026-07-28 is stateless/);
  }
  const tests = await pool.query('SELECT count(*)::int AS n FROM doorbell_tests WHERE endpoint_id = $1', [
    v.endpoint.id,
  ]);
  assert.equal(tests.rows[0].n, 0);
  // An ungranted verb is still forbidden first, an unknown one not_found.
  assert.equal((await tool(client, 'set_admission_policy', { queue: 'inbox' })).error.code, 'forbidden');
  assert.equal((await tool(client, 'no_such_verb')).error.code, 'not_found');
});

test('every stateless request needs the bearer: none or an unknown one is 401, a live one answers with resultType', async () => {
  const v = await vend(pool);
  const none = await raw(a.url, 'POST', modernHeaders('', 'tools/list'), envelope('tools/list'));
  assert.equal(none.status, 401);
  const bad = await raw(a.url, 'POST', modernHeaders('sbk_nope', 'tools/list'), envelope('tools/list'));
  assert.equal(bad.status, 401);
  const good = await raw(a.url, 'POST', modernHeaders(v.credential, 'tools/list'), envelope('tools/list'));
  assert.equal(good.status, 200, good.text);
  const body = JSON.parse(good.text);
  assert.equal(body.result.resultType, 'complete');
  assert.ok(Array.isArray(body.result.tools));
  assert.equal(good.headers.get('mcp-session-id'), null);
});

test('server/discover answers the revision and capabilities without a session; a bad envelope is -32602', async () => {
  const v = await vend(pool);
  const discover = await raw(
    a.url,
    'POST',
    modernHeaders(v.credential, 'server/discover'),
    envelope('server/discover'),
  );
  assert.equal(discover.status, 200, discover.text);
  const result = JSON.parse(discover.text).result;
  assert.deepEqual(result.supportedVersions, [REVISION]);
  assert.deepEqual(result.capabilities.tools, { listChanged: false });
  assert.equal(result.capabilities.experimental, undefined, 'no channel without a session');
  const broken = envelope('tools/list');
  (broken.params._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'] = 7;
  const refused = await raw(a.url, 'POST', modernHeaders(v.credential, 'tools/list'), broken);
  assert.equal(refused.status, 400);
  assert.equal(JSON.parse(refused.text).error.code, -32602);
  const mismatch = await raw(
    a.url,
    'POST',
    modernHeaders(v.credential, 'tools/call', 'whoami'),
    envelope('tools/list'),
  );
  assert.equal(mismatch.status, 400);
});

test('a waiting claim_next with a progressToken reports progress on its own response stream', async () => {
  const v = await vend(pool);
  const client = await modern(a.url, v.credential);
  const progress: unknown[] = [];
  const result = await client.callTool(
    { name: 'claim_next', arguments: { wait_seconds: 1 } },
    { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
  );
  assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]?.text ?? ''), { empty: true });
  assert.ok(progress.length >= 1, 'at least the first progress notification');
  assert.deepEqual(progress[0], { progress: 0, total: 1, message: 'waiting for work' });
});

test('subscriptions/listen is acknowledged with what applies (nothing: the tool list does not change) and ends', async () => {
  const v = await vend(pool);
  const client = await modern(a.url, v.credential);
  const subscription = await client.listen({ toolsListChanged: true });
  assert.deepEqual(subscription.honoredFilter, {});
  assert.equal(await subscription.closed, 'graceful');
});

test('a 2025-11-25 session on the same instance is unchanged, and a request without an envelope still needs its session', async () => {
  const v = await vend(pool);
  const session = await connect(a.url, v.credential);
  assert.match((await ok(session, 'whoami')).session_id, /^ms_/);
  const bare = await raw(
    a.url,
    'POST',
    { authorization: `Bearer ${v.credential}` },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  );
  assert.equal(bare.status, 400);
  assert.match(bare.text, /Mcp-Session-Id header is required/);
});

test('a stateless client that goes away ends its wait at once, and claims nothing pushed after', async () => {
  const v = await vend(pool);
  const gone = new AbortController();
  const call = fetch(new URL('/mcp', a.url), {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...modernHeaders(v.credential, 'tools/call', 'claim_next'),
    },
    body: JSON.stringify(envelope('tools/call', { name: 'claim_next', arguments: { wait_seconds: 60 } })),
    signal: gone.signal,
  }).catch((err: unknown) => err);
  await until(() => a.services.waiters.waiting(v.endpoint.id) === 1, 'the call to wait');
  gone.abort();
  await call;
  await until(() => a.services.waiters.waiting(v.endpoint.id) === 0, 'the wait to end');
  const session = await connect(a.url, v.credential);
  const { todo } = await ok(session, 'create_todo', { queue: 'inbox', title: 'after' });
  assert.equal((await ok(session, 'get_todo', { id: todo.id })).todo.state, 'pending');
});

test('stateless requests pass the same per-credential rate limit and Origin check as sessions', async () => {
  const limited = await startApp(pool, 'stateless-limited', undefined, {
    env: { SWITCHBOARD_MCP_RATE: '1', SWITCHBOARD_MCP_BURST: '1' },
  });
  const v = await vend(pool);
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      raw(limited.url, 'POST', modernHeaders(v.credential, 'tools/list'), envelope('tools/list')),
    ),
  );
  const refused = answers.filter((r) => r.status === 429);
  assert.ok(refused.length >= 1, `statuses ${answers.map((r) => r.status).join(',')}`);
  assert.match(refused[0]?.text ?? '', /SWITCHBOARD_MCP_RATE/);
  const foreign = await raw(
    a.url,
    'POST',
    { ...modernHeaders(v.credential, 'tools/list'), origin: 'https://evil.example' },
    envelope('tools/list'),
  );
  assert.equal(foreign.status, 403);
});

test('a GET or DELETE naming 2026-07-28 without a session is 405 (that revision has no stream and no session)', async () => {
  const v = await vend(pool);
  for (const method of ['GET', 'DELETE']) {
    const res = await raw(a.url, method, { authorization: `Bearer ${v.credential}`, 'mcp-protocol-version': REVISION });
    assert.equal(res.status, 405, `${method}: ${res.text}`);
    assert.equal(res.headers.get('allow'), 'POST');
  }
  const stale = await raw(a.url, 'GET', { authorization: `Bearer ${v.credential}` });
  assert.equal(stale.status, 400, 'without the header it is a 2025 GET missing its session, as before');
});

test('a claim made in a 2025-11-25 session is completed from a stateless request with its lease token, and only with it', async () => {
  const v = await vend(pool);
  const session = await connect(a.url, v.credential);
  const { todo } = await ok(session, 'create_todo', { queue: 'inbox', title: 'hand over' });
  const claimed = await ok(session, 'claim', { id: todo.id });
  const client = await modern(a.url, v.credential);
  const bare = await tool(client, 'complete', { id: todo.id });
  assert.equal(bare.error?.code, 'conflict', JSON.stringify(bare));
  const done = await tool(client, 'complete', {
    id: todo.id,
    lease_token: claimed.lease_token,
    summary: 'done elsewhere',
  });
  assert.equal(done.todo?.state, 'done', JSON.stringify(done));
});

test('a plain HTTP client with no MCP session settles a claim with its lease token: one POST, one JSON answer', async () => {
  const v = await vend(pool);
  const session = await connect(a.url, v.credential);
  const { todo } = await ok(session, 'create_todo', { queue: 'inbox', title: 'settled by curl' });
  const claimed = await ok(session, 'claim', { id: todo.id });
  const post = (name: string, args: Record<string, unknown>) =>
    raw(
      a.url,
      'POST',
      modernHeaders(v.credential, 'tools/call', name),
      envelope('tools/call', { name, arguments: args }),
    );
  const beat = await post('heartbeat', { id: todo.id, lease_token: claimed.lease_token });
  assert.equal(beat.status, 200, beat.text);
  assert.equal(beat.headers.get('mcp-session-id'), null);
  const res = await post('complete', { id: todo.id, lease_token: claimed.lease_token, result: { via: 'curl' } });
  assert.equal(res.status, 200, res.text);
  const answer = JSON.parse(res.text) as { result: { content: Array<{ text: string }>; isError?: boolean } };
  assert.notEqual(answer.result.isError, true, res.text);
  const body = JSON.parse(answer.result.content[0]?.text ?? '') as { todo: { state: string } };
  assert.equal(body.todo.state, 'done');
  const again = await post('complete', { id: todo.id, lease_token: claimed.lease_token });
  const refused = JSON.parse(again.text) as { result: { content: Array<{ text: string }>; isError?: boolean } };
  assert.equal(refused.result.isError, true);
  assert.match(refused.result.content[0]?.text ?? '', /"code":"conflict".*already completed/);
});
