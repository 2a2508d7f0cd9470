// Pins a todo's trace across instances (docs/design/tracing.md, "A todo's trace"): two
// real instances on one database export to one in-memory exporter; a todo created over
// the API on A with a `traceparent` stores that trace, the doorbell ring and the MCP claim
// and complete through B link to it, and the SQL each request issued hangs under its span.
// A schedule's todo starts a trace of its own, and log lines inside a span name it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino, type Logger } from 'pino';
import WebSocket from 'ws';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/http/logger.js';
import { startServer, type Server } from '../../src/main.js';
import { createSchedule } from '../../src/schedules/manage.js';
import { traceLogFields } from '../../src/tracing/index.js';
import { testDatabase } from '../helpers/db.js';

const { pool, url } = await testDatabase('tracing');
const exporter = new InMemorySpanExporter();

async function instance(id: string, log: Logger = pino({ level: 'silent' })): Promise<Server> {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: url,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: id,
    SWITCHBOARD_DB_POOL_SIZE: '4',
    SWITCHBOARD_AUTH: 'off',
    // Notify hooks to a receiver on this machine, over http.
    SWITCHBOARD_PUSH_ALLOW_HTTP: 'on',
    SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '127.0.0.0/8',
  });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  assert.equal(parsed.config.tracing.enabled, false, 'no OTLP endpoint: only the test exporter');
  const server = await startServer(parsed.config, log, { tracing: { exporter } });
  after(() => server.stop());
  return server;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparentFor = (traceId: string, spanId = hex(8)) => `00-${traceId}-${spanId}-01`;

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const found = await check();
    if (found !== undefined && found !== false) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const linksTo = (span: ReadableSpan, traceId: string) => span.links.some((l) => l.context.traceId === traceId);
const childrenOf = (span: ReadableSpan) =>
  spans().filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);
const instanceOf = (span: ReadableSpan) => span.resource.attributes['service.instance.id'];

const a = await instance('trace-a');
const b = await instance('trace-b');

test('one todo, two instances: create on A, ring, claim and complete through B all land in (or link to) its trace', async () => {
  const vended = await fetch(`${a.url}/api/v1/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `traced ${hex(3)}` }),
  });
  assert.equal(vended.status, 201);
  const { endpoint, credential } = (await vended.json()) as { endpoint: { slug: string }; credential: string };

  // An agent's session on B, its notification stream open there, hearing rings.
  const heard: string[] = [];
  const client = new Client(
    { name: 'traced-agent', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    const todoId = (n.params as { meta?: { todo_id?: string } }).meta?.todo_id;
    if (n.method === 'notifications/claude/channel' && todoId) heard.push(todoId);
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.url), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  after(() => client.close());
  await until(async () => {
    const res = await pool.query('SELECT stream_open, instance FROM mcp_sessions WHERE id = $1', [transport.sessionId]);
    return res.rows[0]?.stream_open === true && res.rows[0]?.instance === 'trace-b' ? true : undefined;
  }, 'the session stream on B');

  // The producer's trace: the API request on A is a child of the header's span.
  const traceId = hex(16);
  const callerSpan = hex(8);
  const created = await fetch(`${a.url}/api/v1/endpoints/${endpoint.slug}/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: traceparentFor(traceId, callerSpan) },
    body: JSON.stringify({ queue: 'inbox', title: 'traced work' }),
  });
  assert.equal(created.status, 201);
  const { todo } = (await created.json()) as { todo: { id: string } & Record<string, unknown> };
  assert.equal('traceparent' in todo, false, 'the stored trace context is not part of the todo on the wire');

  const post = await until(
    () => spans().find((s) => s.spanContext().traceId === traceId && s.name.startsWith('POST ')),
    'the create request span',
  );
  assert.equal(post.name, 'POST /api/v1/endpoints/:ref/todos', 'named by the route pattern, not the URL');
  assert.equal(post.parentSpanContext?.spanId, callerSpan);
  assert.equal(post.attributes['http.route'], '/api/v1/endpoints/:ref/todos');
  assert.equal(post.attributes['http.request.method'], 'POST');
  assert.equal(post.attributes['http.response.status_code'], 201);
  assert.equal(instanceOf(post), 'trace-a');
  assert.equal(post.resource.attributes['service.name'], 'switchboard');
  const sql = childrenOf(post).filter((s) => s.attributes['db.system'] === 'postgresql');
  assert.ok(
    sql.some(
      (s) => s.attributes['db.operation'] === 'WITH' && /INSERT INTO todos/.test(String(s.attributes['db.statement'])),
    ),
    `the insert is a child of the request: ${sql.map((s) => s.name).join(', ')}`,
  );
  for (const s of sql) assert.doesNotMatch(String(s.attributes['db.statement']), /traced work/, 'never a value');

  const stored = await pool.query<{ traceparent: string }>('SELECT traceparent FROM todos WHERE id = $1', [todo.id]);
  assert.equal(stored.rows[0]?.traceparent, traceparentFor(traceId, post.spanContext().spanId));

  // The doorbell rings B's session; the ring's span links to the todo's trace.
  await until(() => (heard.includes(todo.id) ? true : undefined), 'the ring');
  const ring = await until(
    () => named('doorbell ring').find((s) => s.attributes['switchboard.todo'] === todo.id),
    'the ring span',
  );
  assert.ok(linksTo(ring, traceId), 'the ring links to the todo');

  // The claim carries the agent's own context in _meta: its span is a child of it, and links to the todo.
  const agentTrace = hex(16);
  const agentSpan = hex(8);
  const claimed = (await client.callTool({
    name: 'claim',
    arguments: { id: todo.id },
    _meta: { traceparent: traceparentFor(agentTrace, agentSpan) },
  })) as CallToolResult;
  assert.ok(!claimed.isError, JSON.stringify(claimed.structuredContent));
  assert.equal('traceparent' in ((claimed.structuredContent as { todo: object }).todo ?? {}), false);
  const completed = (await client.callTool({ name: 'complete', arguments: { id: todo.id } })) as CallToolResult;
  assert.ok(!completed.isError);
  const again = (await client.callTool({ name: 'complete', arguments: { id: todo.id } })) as CallToolResult;
  assert.ok(again.isError);

  const claim = await until(() => named('mcp claim')[0], 'the claim span');
  assert.equal(instanceOf(claim), 'trace-b');
  assert.equal(claim.spanContext().traceId, agentTrace);
  assert.equal(claim.parentSpanContext?.spanId, agentSpan);
  assert.ok(linksTo(claim, traceId), 'the claim links to the todo');
  assert.equal(claim.attributes['mcp.tool.name'], 'claim');
  assert.equal(claim.attributes['switchboard.endpoint'], endpoint.slug);
  assert.equal(claim.attributes['switchboard.outcome'], 'ok');
  assert.ok(
    childrenOf(claim).some((s) => s.attributes['db.system'] === 'postgresql' && s.name.startsWith('pg ')),
    'the claim statement is a child of the verb',
  );

  const completes = await until(
    () => (named('mcp complete').length === 2 ? named('mcp complete') : undefined),
    'two completes',
  );
  const done = completes.find((s) => s.attributes['switchboard.outcome'] === 'ok');
  assert.ok(done && linksTo(done, traceId), 'the complete links to the todo');
  // Without _meta the verb's span is a child of B's /mcp request span.
  const mcpRequest = spans().find((s) => s.spanContext().spanId === done.parentSpanContext?.spanId);
  assert.equal(mcpRequest?.name, 'POST /mcp');
  assert.equal(instanceOf(mcpRequest), 'trace-b');
  const refused = completes.find((s) => s !== done);
  assert.equal(refused?.attributes['switchboard.outcome'], 'conflict');

  // One search for the trace id finds the todo's whole life: spans in it, or linking to it.
  const life = spans().filter((s) => s.spanContext().traceId === traceId || linksTo(s, traceId));
  const names = new Set(life.map((s) => s.name));
  for (const name of ['POST /api/v1/endpoints/:ref/todos', 'doorbell ring', 'mcp claim', 'mcp complete'])
    assert.ok(names.has(name), `${name} in ${[...names].join(', ')}`);
  assert.deepEqual(new Set(life.map(instanceOf)), new Set(['trace-a', 'trace-b']));
});

test("a schedule's todo starts a trace of its own, whatever span the tick ran in", async () => {
  const vended = await fetch(`${a.url}/api/v1/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `scheduled ${hex(3)}` }),
  });
  const { endpoint } = (await vended.json()) as { endpoint: { slug: string } };
  const human = await pool.query<{ human_id: string }>('SELECT human_id FROM endpoints WHERE slug = $1', [
    endpoint.slug,
  ]);
  const past = new Date(Date.now() - 3_600_000);
  const { schedule } = await createSchedule(
    { db: pool, publicUrl: 'http://switchboard.test' },
    human.rows[0]?.human_id ?? '',
    endpoint.slug,
    { queue: 'inbox', cron: '* * * * *', tz: 'UTC', title: 'every minute' },
    past,
  );
  const sweep = a.sweeps.find((s) => s.name === 'schedules');
  assert.ok(sweep, a.sweeps.map((s) => s.name).join(', '));
  // The tick as the sweep runner runs it: inside a span of its own.
  const outer = await a.tracing.run('sweep schedules (test)', { root: true }, async () => {
    await sweep.run();
    return a.tracing.traceparent();
  });
  const row = await until(async () => {
    const res = await pool.query<{ traceparent: string | null }>(
      'SELECT traceparent FROM todos WHERE schedule_id = $1',
      [schedule.id],
    );
    return res.rows[0];
  }, "the schedule's todo");
  assert.ok(row.traceparent);
  const occurrence = named('schedule occurrence').find((s) => s.attributes['switchboard.schedule'] === schedule.id);
  assert.ok(occurrence);
  assert.equal(occurrence.parentSpanContext, undefined, 'a root span');
  assert.notEqual(occurrence.spanContext().traceId, outer?.split('-')[1], 'not the tick’s trace');
  assert.equal(row.traceparent.split('-')[1], occurrence.spanContext().traceId, 'the todo stores the occurrence');
  assert.ok(
    childrenOf(occurrence).some((s) => /INSERT INTO todos/.test(String(s.attributes['db.statement']))),
    "the occurrence's insert is its child, inside the tick's transaction",
  );
});

test('log lines inside a span carry its trace_id and span_id; levels are names and times ISO', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger('info', sink, { mixin: await traceLogFields() });
  const c = await instance('trace-logs', log);
  const traceId = hex(16);
  const res = await fetch(`${c.url}/api/v1/whoami`, { headers: { traceparent: traceparentFor(traceId) } });
  assert.equal(res.status, 200);
  const line = await until(
    () => lines.find((l) => l.msg === 'request' && l.route === '/api/v1/whoami'),
    'the request line',
  );
  const span = spans().find((s) => s.spanContext().traceId === traceId && s.name === 'GET /api/v1/whoami');
  assert.ok(span);
  assert.equal(line.trace_id, traceId);
  assert.equal(line.span_id, span.spanContext().spanId);
  assert.equal(line.level, 'info');
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const started = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('switchboard '));
  assert.ok(started);
  assert.equal('trace_id' in started, false, 'no span, no trace fields');
});

test('/ws: the upgrade request span ends once the socket is open, and each frame has a span of its own named by its action', async () => {
  const socket = new WebSocket(`${a.url.replace(/^http/, 'ws')}/ws`);
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  const answers: Array<{ id?: number; type?: string }> = [];
  socket.on('message', (data) => answers.push(JSON.parse(String(data))));
  const frame = (id: number, action: string, payload: unknown) =>
    socket.send(JSON.stringify({ id, type: 'request', action, payload }));
  frame(1, 'message.queue.get', { session_id: 'ms_nobody' });
  frame(2, 'no.such.action', {});
  await until(() => (answers.length >= 2 ? true : undefined), 'both answers');
  // Ended while the socket is still open: a board tab stays connected for hours.
  const upgrade = await until(() => named('GET /ws')[0], 'the upgrade span, ended');
  assert.equal(upgrade.attributes['http.response.status_code'], 101);
  socket.close();

  assert.equal(upgrade.attributes['http.route'], '/ws');
  const get = await until(() => named('ws message.queue.get')[0], 'the frame span');
  assert.equal(get.attributes['switchboard.ws.action'], 'message.queue.get');
  assert.equal(get.parentSpanContext, undefined, 'a trace of its own, not under the upgrade request');
  assert.notEqual(get.spanContext().traceId, upgrade.spanContext().traceId);
  assert.equal(get.attributes['switchboard.outcome'], 'NOT_FOUND');
  assert.equal(get.status.code, 2, 'an error answer marks the span failed');
  assert.ok(
    childrenOf(get).some((s) => s.name.startsWith('pg ')),
    'the action statements hang under its span',
  );
  // An action the server does not know is named `ws unknown`, never by what the client sent.
  const unknown = await until(() => named('ws unknown')[0], 'the unknown frame span');
  assert.equal(unknown.attributes['switchboard.outcome'], 'VALIDATION_ERROR');
  assert.equal(spans().filter((s) => s.name.includes('no.such.action')).length, 0);
});

test("a notify hook's delivery attempt is a client span linked to the todo's trace, and the receiver gets its traceparent", async () => {
  const received: IncomingHttpHeaders[] = [];
  const receiver = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  after(() => receiver.close());
  const { port } = receiver.address() as AddressInfo;

  const vended = await fetch(`${a.url}/api/v1/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `hooked ${hex(3)}` }),
  });
  assert.equal(vended.status, 201);
  const { endpoint } = (await vended.json()) as { endpoint: { slug: string } };
  const hook = await fetch(`${a.url}/api/v1/endpoints/${endpoint.slug}/notify-hooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }),
  });
  assert.equal(hook.status, 201, await hook.text());

  // No session is connected, so the ready todo is announced to the hook.
  const traceId = hex(16);
  const created = await fetch(`${a.url}/api/v1/endpoints/${endpoint.slug}/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: traceparentFor(traceId) },
    body: JSON.stringify({ queue: 'inbox', title: 'announced work' }),
  });
  assert.equal(created.status, 201);

  const attempt = await until(
    () => named('hook POST').find((s) => linksTo(s, traceId)),
    "the delivery attempt's span, linked to the todo's trace",
  );
  assert.equal(attempt.kind, SpanKind.CLIENT);
  assert.equal(attempt.parentSpanContext, undefined, 'a trace of its own: delivery runs after the request answered');
  assert.equal(attempt.attributes['switchboard.hook.type'], 'todo.ready');
  assert.equal(attempt.attributes['switchboard.attempt'], 1);
  assert.equal(attempt.attributes['http.response.status_code'], 200);
  assert.equal(attempt.status.code, 0, 'a delivered attempt is not failed');
  assert.equal(received.length, 1);
  const { traceId: sent, spanId } = attempt.spanContext();
  assert.equal(received[0]?.traceparent, `00-${sent}-${spanId}-01`, "the receiver continues the attempt's trace");
});
