// The world each fuzzer runs in: a real `serve` instance (test/helpers/server.ts) on the
// file's own database, trusting X-Forwarded-For from loopback so every case can come
// from an address of its own (the per-address limit would otherwise answer most cases
// 429); three humans made through the real routes, with several tokens each; endpoints;
// MCP sessions opened with real initialize requests.

import assert from 'node:assert/strict';
import { ensureSetupLink } from '../../src/identity/setup.js';
import type { Server } from '../../src/main.js';
import { testDatabase, type TestDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { send, type Answer } from './http.js';

export const PASSWORD = 'correct horse battery staple';

let addressCounter = 1;
/** A fresh client address (through X-Forwarded-For): every request its own per-address bucket. */
export function freshAddress(): string {
  addressCounter += 1;
  return `10.${(addressCounter >> 16) & 255}.${(addressCounter >> 8) & 255}.${addressCounter & 255}`;
}

export interface World {
  db: TestDatabase;
  server: Server;
  base: string;
}

export async function startWorld(label: string): Promise<World> {
  const db = await testDatabase(label);
  const server = await startTestServer(db.url, `fuzz-${label}`, {
    SWITCHBOARD_TRUST_PROXY: '127.0.0.1/32',
    SWITCHBOARD_DB_POOL_SIZE: '6',
  });
  return { db, server, base: server.url };
}

/** A JSON request from a fresh address; `token` as a bearer. */
export function call(world: World, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { 'x-forwarded-for': freshAddress() };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return send(world.base, { method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

export async function expectOk(answer: Promise<Answer>, label: string): Promise<Answer> {
  const a = await answer;
  assert.ok(a.status >= 200 && a.status < 300, `${label}: ${a.status} ${a.text.slice(0, 300)}`);
  return a;
}

export interface Person {
  id: string;
  email: string;
  role: 'admin' | 'member';
  /** The token the run keeps for itself (never a fuzz target). */
  control: string;
  controlId: string;
}

/** The admin (through the setup link), a member and another human, each signed in. */
export async function makePeople(world: World): Promise<{ admin: Person; member: Person; other: Person }> {
  const link = await ensureSetupLink({ db: world.db.pool, publicUrl: world.base });
  assert.ok(link);
  const token = link.slice(link.lastIndexOf('/') + 1);
  await expectOk(
    call(world, 'POST', '/api/v1/setup', undefined, {
      token,
      email: 'admin@example.test',
      password: PASSWORD,
      display_name: 'Ada Admin',
    }),
    'setup',
  );
  const signIn = async (email: string, role: 'admin' | 'member'): Promise<Person> => {
    const a = await expectOk(
      call(world, 'POST', '/api/v1/auth/login', undefined, { email, password: PASSWORD }),
      email,
    );
    return { id: a.json.human.id, email, role, control: a.json.token, controlId: a.json.token_id };
  };
  const admin = await signIn('admin@example.test', 'admin');
  for (const email of ['member@example.test', 'other@example.test']) {
    await expectOk(
      call(world, 'POST', '/api/v1/humans', admin.control, { email, display_name: email, password: PASSWORD }),
      email,
    );
  }
  return {
    admin,
    member: await signIn('member@example.test', 'member'),
    other: await signIn('other@example.test', 'member'),
  };
}

/** A new human-kind API token of this person (a sign-in, from an address of its own). */
export async function humanToken(world: World, person: Person): Promise<{ id: string; token: string }> {
  const a = await expectOk(
    call(world, 'POST', '/api/v1/auth/login', undefined, { email: person.email, password: PASSWORD }),
    'sign in',
  );
  return { id: a.json.token_id, token: a.json.token };
}

/** A new workflow token of this person (POST /api/v1/tokens mints workflow tokens only). */
export async function workflowToken(world: World, person: Person): Promise<{ id: string; token: string }> {
  const a = await expectOk(
    call(world, 'POST', '/api/v1/tokens', person.control, { name: `fuzz ${freshAddress()}` }),
    'mint',
  );
  return { id: a.json.token.id, token: a.json.secret };
}

export interface Vended {
  id: string;
  slug: string;
  queues: string[];
  credential: string;
  owner: Person;
}

export async function vendEndpoint(world: World, owner: Person, body: Record<string, unknown>): Promise<Vended> {
  const a = await expectOk(call(world, 'POST', '/api/v1/endpoints', owner.control, body), 'vend');
  return {
    id: a.json.endpoint.id,
    slug: a.json.endpoint.slug,
    queues: a.json.endpoint.queues,
    credential: a.json.credential,
    owner,
  };
}

export async function pushTodo(
  world: World,
  owner: Person,
  ref: string,
  body: Record<string, unknown>,
): Promise<string> {
  const a = await expectOk(call(world, 'POST', `/api/v1/endpoints/${ref}/todos`, owner.control, body), 'push');
  return String(a.json.todo.id);
}

export const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};

/** The JSON-RPC messages of an answer that is JSON or an SSE stream of `data:` lines. */
export function rpcMessages(answer: Answer): unknown[] {
  if (answer.json !== undefined) return Array.isArray(answer.json) ? answer.json : [answer.json];
  const out: unknown[] = [];
  for (const line of answer.text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    try {
      out.push(JSON.parse(line.slice(5)));
    } catch {
      // a keep-alive or partial line: not a message
    }
  }
  return out;
}

/** Opens an MCP session (initialize, then notifications/initialized); its id. */
export async function openSession(world: World, credential: string, client = 'fuzz'): Promise<string> {
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${credential}` };
  const init = await send(world.base, {
    method: 'POST',
    path: '/mcp',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: client, version: '1.0.0' } },
    }),
  });
  const sessionId = init.headers['mcp-session-id'];
  assert.ok(typeof sessionId === 'string', `initialize: ${init.status} ${init.text.slice(0, 300)}`);
  await send(world.base, {
    method: 'POST',
    path: '/mcp',
    headers: { ...headers, 'mcp-session-id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return sessionId;
}

/** One tools/call on the direct path; the tool result. */
export async function tool(
  world: World,
  credential: string,
  sessionId: string,
  name: string,
  args: Record<string, unknown>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool bodies are read field by field
): Promise<any> {
  const a = await send(world.base, {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${credential}`, 'mcp-session-id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const [message] = rpcMessages(a) as { result?: { structuredContent?: unknown } }[];
  return message?.result?.structuredContent;
}
