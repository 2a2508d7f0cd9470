// The harness for the /mcp tests: real HTTP apps (every surface on the host, from the
// services as `serve` builds them) listening on 127.0.0.1:0 on a database of the file's own, endpoints vended through the use case, and the SDK's
// real Client over StreamableHTTPClientTransport.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '../../src/domain/events.js';
import type { Pool } from '../../src/db/pool.js';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { insertHuman } from '../../src/store/humans.js';
import type { Services } from '../../src/services.js';
import { listeningApp, testServices, type ServiceSetup } from '../helpers/services.js';
import { toolBody } from '../helpers/tool-result.js';

export const DEFAULT_LEASE_SECONDS = 300;

/** An app listening on a free loopback port; closed when the file ends. */
export async function startApp(
  pool: Pool,
  instanceId: string,
  bus?: Bus,
  setup: Omit<ServiceSetup, 'pool' | 'instanceId' | 'bus'> = {},
): Promise<{ app: FastifyInstance; url: string; services: Services }> {
  const services = await testServices({ ...setup, pool, instanceId, ...(bus ? { bus } : {}) });
  return { ...(await listeningApp(services)), services };
}

export interface Vended {
  humanId: string;
  endpoint: { id: string; slug: string; queues: string[]; verbs: string[] };
  credential: string;
}

/** A human of its own and an endpoint vended for it through the use case. */
export async function vend(pool: Pool, input: Record<string, unknown> = {}): Promise<Vended> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `h-${tag}@example.test`,
    displayName: tag,
    role: 'member',
  });
  const vended = await vendEndpoint(
    { db: pool, publicUrl: 'http://switchboard.test' },
    human.id,
    { name: `agent ${tag}`, ...input },
    new Date(),
  );
  return { humanId: human.id, endpoint: vended.endpoint, credential: vended.credential };
}

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  sessionId: string;
}

function transportFor(url: string, credential: string, sessionId?: string) {
  return new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    ...(sessionId ? { sessionId } : {}),
  });
}

/** The capability a client declares to be rung (docs/design/doorbell-acknowledgement.md, "Who is rung"). */
export const CHANNEL_CAPABILITY = { experimental: { 'claude/channel': {} } };

/**
 * A client connected (initialize done) as this credential; closed when the file ends. It
 * declares claude/channel, as a client that takes doorbells and messages does, unless
 * `channel` is false (a client that long-polls).
 */
export async function connect(
  url: string,
  credential: string,
  name = 'test-client',
  o: { channel?: boolean } = {},
): Promise<Connected> {
  const client = new Client(
    { name, version: '1.2.3' },
    o.channel === false ? {} : { capabilities: CHANNEL_CAPABILITY },
  );
  const transport = transportFor(url, credential);
  await client.connect(transport);
  after(() => client.close());
  assert.ok(transport.sessionId);
  return { client, transport, sessionId: transport.sessionId };
}

/** A client that resumes an existing session (no initialize), e.g. on another instance. */
export async function resume(url: string, credential: string, sessionId: string): Promise<Connected> {
  const client = new Client({ name: 'resumer', version: '1.0.0' });
  const transport = transportFor(url, credential, sessionId);
  await client.connect(transport);
  after(() => client.close());
  return { client, transport, sessionId };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool bodies are checked field by field
export type Body = any;

/**
 * Calls a tool and returns its body (content[0]'s JSON, which a success also carries as
 * structuredContent and an error carries alone), with isError when it failed.
 */
export async function call(c: Connected, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const result = (await c.client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...(toolBody(result) as object), ...(result.isError ? { isError: true } : {}) };
}

/** Calls a tool that must succeed. */
export async function ok(c: Connected, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const body = await call(c, name, args);
  assert.ok(!body.isError, `${name} failed: ${JSON.stringify(body)}`);
  return body;
}

/** Calls a tool that must fail with this code (and, when given, name this field). */
export async function fails(
  c: Connected,
  name: string,
  args: Record<string, unknown>,
  code: string,
  field?: string,
): Promise<Body> {
  const body = await call(c, name, args);
  assert.equal(body.isError, true, `${name} ${JSON.stringify(args)} should fail: ${JSON.stringify(body)}`);
  assert.equal(body.error?.code, code, `${name} ${JSON.stringify(args)}: ${JSON.stringify(body)}`);
  assert.equal(typeof body.error.message, 'string');
  if (field !== undefined) assert.equal(body.error.field, field, `${name}: ${JSON.stringify(body)}`);
  return body;
}

/** A raw HTTP request to /mcp, for what the SDK client will not send. */
export async function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(new URL('/mcp', url), {
    method,
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * A session driven by bare HTTP, as a one-shot client drives it: initialize and
 * `notifications/initialized`, then tool calls, and never a notification stream (the SDK
 * client opens one on its own). `call` answers the tool result's JSON text; `signal`
 * ends a call in flight (a waiting claim_next).
 */
export async function bareSession(url: string, credential: string) {
  const init = await raw(
    url,
    'POST',
    { authorization: `Bearer ${credential}` },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare', version: '0' } },
    },
  );
  assert.equal(init.status, 200, init.text);
  const id = init.headers.get('mcp-session-id') ?? '';
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  assert.equal((await raw(url, 'POST', headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const call = async (name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Body> => {
    const res = await fetch(new URL('/mcp', url), {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '');
    const result = (JSON.parse(data) as { result: CallToolResult }).result;
    const first = result.content[0];
    return JSON.parse(first?.type === 'text' ? first.text : '{}');
  };
  return { id, headers, call };
}
