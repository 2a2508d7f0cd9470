// Pins the notification stream this instance writes itself (src/sessions/streams.ts): a session
// that only listens holds no SDK server between requests, is still rung, takes SDK POSTs
// while listening, and its GET is answered and refused as the SDK's transport would; and
// client notifications, answered without an SDK server, get the SDK's answers.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { testDatabase } from '../helpers/db.js';
import { raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_streams');
const a = await startApp(pool, 'instance-a');
const b = await startApp(pool, 'instance-b');

// SDK servers connected and not yet closed, and connected in all, in this process (both apps run here).
let connected = 0;
let built = 0;
const sdkConnect = Reflect.get(Server.prototype, 'connect');
const sdkClose = Reflect.get(Server.prototype, 'close');
Server.prototype.connect = function (this: Server, ...args: Parameters<Server['connect']>) {
  connected += 1;
  built += 1;
  return sdkConnect.apply(this, args);
};
Server.prototype.close = function (this: Server) {
  connected -= 1;
  return sdkClose.apply(this);
};
after(() => Object.assign(Server.prototype, { connect: sdkConnect, close: sdkClose }));

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function streamOpen(sessionId: string): Promise<boolean> {
  const res = await pool.query('SELECT stream_open FROM mcp_sessions WHERE id = $1', [sessionId]);
  return res.rows[0]?.stream_open === true;
}

/** initialize and notifications/initialized over raw HTTP; the session id and its headers. */
async function session(base: string, credential: string) {
  const init = await raw(
    base,
    'POST',
    { authorization: `Bearer ${credential}` },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
  );
  const sessionId = init.headers.get('mcp-session-id') ?? '';
  assert.equal(init.status, 200, init.text);
  const headers = {
    authorization: `Bearer ${credential}`,
    'mcp-session-id': sessionId,
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  const initialized = await raw(base, 'POST', headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(initialized.status, 202);
  return { sessionId, headers };
}

/** A GET stream, read frame by frame. */
async function listen(base: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(new URL('/mcp', base), {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  after(() => controller.abort());
  const reader = response.body?.getReader();
  assert.ok(reader);
  const decoder = new TextDecoder();
  let buffered = '';
  const next = async (): Promise<string> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        return frame;
      }
      const chunk = await reader.read();
      if (chunk.done) return '';
      buffered += decoder.decode(chunk.value, { stream: true });
    }
  };
  return { response, next, close: () => controller.abort() };
}

const ringParams = (n: number) => ({ content: `ring ${n}`, meta: { todo_id: `td_${n}`, ring_id: `rg_${n}` } });
/** The one message of an SSE frame, which must be an `event: message` frame. */
function messageOf(frame: string): unknown {
  const [event, data = '', ...rest] = frame.split('\n');
  assert.equal(event, 'event: message', frame);
  assert.deepEqual(rest, [], frame);
  assert.ok(data.startsWith('data: '), frame);
  return JSON.parse(data.slice('data: '.length)) as unknown;
}

const channel = (n: number) => ({ jsonrpc: '2.0', method: 'notifications/claude/channel', params: ringParams(n) });

test('a session with only a stream holds no SDK server, is rung, and takes SDK POSTs while listening', async () => {
  const { credential } = await vend(pool);
  const { sessionId, headers } = await session(a.url, credential);
  const stream = await listen(a.url, headers);
  assert.equal(stream.response.status, 200);
  assert.equal(stream.response.headers.get('content-type'), 'text/event-stream');
  assert.equal(stream.response.headers.get('cache-control'), 'no-cache, no-transform');
  assert.equal(stream.response.headers.get('mcp-session-id'), sessionId);
  await until(() => streamOpen(sessionId), 'stream_open');
  // Each POST's SDK server is closed right after its answer is written.
  await until(() => connected === 0, 'no SDK server left once the POSTs are answered');

  assert.equal(await a.services.streams.ring(sessionId, ringParams(1)), true);
  assert.deepEqual(messageOf(await stream.next()), channel(1));

  const listed = await raw(a.url, 'POST', headers, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
  assert.equal(listed.status, 200);
  assert.match(listed.text, /"id":2/);
  assert.match(listed.text, /claim_next/);
  const ping = await raw(a.url, 'POST', headers, { jsonrpc: '2.0', id: 3, method: 'ping' });
  assert.match(ping.text, /"result":\{\}/);
  await until(() => connected === 0, 'no SDK server left after tools/list and ping');

  assert.equal(await a.services.streams.ring(sessionId, ringParams(2)), true);
  assert.deepEqual(messageOf(await stream.next()), channel(2));
  assert.equal(await b.services.streams.ring(sessionId, ringParams(3)), false, 'instance B holds no stream of it');

  stream.close();
  await until(async () => !(await streamOpen(sessionId)), 'the stream to be marked closed');
  assert.equal(await a.services.streams.ring(sessionId, ringParams(4)), false);
});

test('a stream opened on another instance than the one that minted the session is rung there', async () => {
  const { credential } = await vend(pool);
  const { sessionId, headers } = await session(a.url, credential);
  const stream = await listen(b.url, headers);
  await until(() => streamOpen(sessionId), 'stream_open');
  assert.equal(await a.services.streams.ring(sessionId, ringParams(5)), false);
  assert.equal(await b.services.streams.ring(sessionId, ringParams(5)), true);
  assert.deepEqual(messageOf(await stream.next()), channel(5));
});

test('a second stream is refused with 409 and leaves the first one open and recorded', async () => {
  const { credential } = await vend(pool);
  const { sessionId, headers } = await session(a.url, credential);
  const first = await listen(a.url, headers);
  await until(() => streamOpen(sessionId), 'stream_open');
  const second = await raw(a.url, 'GET', { ...headers, accept: 'text/event-stream' });
  assert.equal(second.status, 409);
  assert.deepEqual(JSON.parse(second.text), {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Conflict: Only one SSE stream is allowed per session' },
    id: null,
  });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(await streamOpen(sessionId), true);
  assert.equal(await a.services.streams.ring(sessionId, ringParams(6)), true);
  assert.deepEqual(messageOf(await first.next()), channel(6));
});

test('a GET that does not accept an event stream, or names an unknown protocol version, is refused and records nothing', async () => {
  const { credential } = await vend(pool);
  const { sessionId, headers } = await session(a.url, credential);
  const notAcceptable = await raw(a.url, 'GET', { ...headers, accept: 'application/json' });
  assert.equal(notAcceptable.status, 406);
  assert.match(notAcceptable.text, /Client must accept text\/event-stream/);
  const badVersion = await raw(a.url, 'GET', {
    ...headers,
    accept: 'text/event-stream',
    'mcp-protocol-version': '1999-01-01',
  });
  assert.equal(badVersion.status, 400);
  assert.match(
    badVersion.text,
    new RegExp(`Unsupported protocol version: 1999-01-01 .*${SUPPORTED_PROTOCOL_VERSIONS[0]}`),
  );
  assert.equal(await streamOpen(sessionId), false);
  assert.equal(await a.services.streams.ring(sessionId, ringParams(7)), false);
});

test('DELETE ends the stream, and the session is not found afterwards', async () => {
  const { credential } = await vend(pool);
  const { sessionId, headers } = await session(a.url, credential);
  const stream = await listen(a.url, headers);
  await until(() => streamOpen(sessionId), 'stream_open');
  assert.equal((await raw(a.url, 'DELETE', headers)).status, 200);
  assert.equal(await stream.next(), '', 'the stream ends');
  assert.equal(await a.services.streams.ring(sessionId, ringParams(8)), false);
  assert.equal((await raw(a.url, 'GET', { ...headers, accept: 'text/event-stream' })).status, 404);
});

test('a client notification is answered 202 without an SDK server; one the SDK would refuse still gets its answer', async () => {
  const { credential } = await vend(pool);
  const { headers } = await session(a.url, credential);
  const before = built;
  for (const notification of [
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } },
  ]) {
    for (const base of [a.url, b.url]) {
      const res = await raw(base, 'POST', headers, notification);
      assert.deepEqual([res.status, res.text], [202, ''], `${notification.method} on ${base}`);
    }
  }
  assert.equal(built, before, 'no SDK server for a notification');

  const unknown = await raw(
    a.url,
    'POST',
    { ...headers, 'mcp-session-id': 'ms_01JAAAAAAAAAAAAAAAAAAAAAAA' },
    {
      jsonrpc: '2.0',
      method: 'notifications/initialized',
    },
  );
  assert.equal(unknown.status, 404);
  const extraKey = await raw(a.url, 'POST', headers, { jsonrpc: '2.0', method: 'notifications/initialized', x: 1 });
  assert.equal(extraKey.status, 400);
  assert.equal(JSON.parse(extraKey.text).error.code, -32700);
  const notAcceptable = await raw(
    a.url,
    'POST',
    { ...headers, accept: 'application/json' },
    {
      jsonrpc: '2.0',
      method: 'notifications/initialized',
    },
  );
  assert.equal(notAcceptable.status, 406);
  assert.equal(built, before + 2, 'those two went to the SDK');
});
