// The world each fuzzer runs in: two real `serve` instances (test/helpers/server.ts) on the
// file's own database, trusting X-Forwarded-For from loopback so every case can come
// from an address of its own (the per-address limit would otherwise answer most cases
// 429); three humans made through the real routes, with several tokens each; endpoints;
// MCP sessions opened with real initialize requests.
//
// The two instances differ only in their limits, which are per instance. The fuzzers run
// their main pass against the one with every limit they do not test raised
// (RAISED_LIMITS), so the cases reach the handlers instead of a 429; then a smaller pass
// against the one with the default limits, where refusals by the limits are part of what
// is checked (their answers must keep the documented shape too).

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

/**
 * Every limit the fuzzers do not test, raised far past what a run sends. A new limit
 * setting belongs here as soon as it exists, or the raised pass meets it.
 */
export const RAISED_LIMITS: Record<string, string> = {
  SWITCHBOARD_API_RATE: '1000000',
  SWITCHBOARD_API_BURST: '1000000',
  SWITCHBOARD_API_RATE_PER_IP: '1000000',
  SWITCHBOARD_API_BURST_PER_IP: '1000000',
  SWITCHBOARD_WS_RATE: '1000000',
  SWITCHBOARD_WS_BURST: '1000000',
  SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT: '10000',
  // /mcp's limits: test/mcp/limits.test.ts tests them.
  SWITCHBOARD_MCP_RATE: '1000000',
  SWITCHBOARD_MCP_BURST: '1000000',
  SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT: '100000',
  SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP: '1000000',
  SWITCHBOARD_MCP_UNAUTH_BURST_PER_IP: '1000000',
  // Sign-in and the quotas: the run signs its few humans in again and again, and vends and
  // mints as cases ask (test/api/signin-throttle.test.ts and quotas.test.ts test them).
  SWITCHBOARD_SIGNIN_BURST: '1000000',
  SWITCHBOARD_SIGNIN_PER_MINUTE: '1000000',
  SWITCHBOARD_QUOTA_ENDPOINTS: '1000000',
  SWITCHBOARD_QUOTA_API_TOKENS: '1000000',
  SWITCHBOARD_QUOTA_WEBHOOKS: '1000000',
  SWITCHBOARD_QUOTA_NOTIFY_HOOKS: '1000000',
  SWITCHBOARD_QUOTA_SCHEDULES: '1000000',
};

/**
 * The most of a raised pass's cases that may still meet a limit that a setting raises (a
 * rate limit, a quota, the waiters): a few at most, for a case that lands in the instant a
 * limit is read. The fixed ceilings are not counted (fixedCeiling).
 */
export const MAX_EXHAUSTED_SHARE = 0.02;

/**
 * Whether a resource_exhausted error body is one of the ceilings no setting raises, which
 * some cases meet on purpose: a notify hook past the endpoint's MAX_HOOKS
 * (src/hooks/manage.ts, details `max`), a doorbell test while one runs (details `test_id`)
 * or past the endpoint's hourly ones (src/doorbell/self-test.ts, "doorbell tests an hour").
 * How many a run meets depends on how often the seed picks those verbs, so the raised
 * pass prints them apart and does not hold them against the limits it raised.
 */
export function fixedCeiling(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; message?: unknown; details?: object };
  if (e.code !== 'resource_exhausted') return false;
  // MCP spreads the details into the error; the API and /ws nest them under `details`.
  const details = { ...e, ...e.details } as { max?: unknown; test_id?: unknown };
  return (
    details.max !== undefined || details.test_id !== undefined || String(e.message).includes('doorbell tests an hour')
  );
}

/** The default-limits pass runs this many cases for a raised pass of `cases`. */
export function defaultPassCases(cases: number): number {
  return Math.max(1, Math.round(cases / 4));
}

export interface World {
  db: TestDatabase;
  /** The instance with RAISED_LIMITS. */
  server: Server;
  /** The instance with the default limits. */
  defaults: Server;
  /** Where requests go now: the raised instance, or the defaults one (usePass). */
  base: string;
}

export async function startWorld(label: string): Promise<World> {
  const db = await testDatabase(label);
  const common = { SWITCHBOARD_TRUST_PROXY: '127.0.0.1/32', SWITCHBOARD_DB_POOL_SIZE: '6' };
  const server = await startTestServer(db.url, `fuzz-${label}`, { ...common, ...RAISED_LIMITS });
  const defaults = await startTestServer(db.url, `fuzz-${label}-defaults`, common);
  return { db, server, defaults, base: server.url };
}

/** Sends what follows to the instance with raised limits, or to the one with the defaults. */
export function usePass(world: World, pass: 'raised' | 'defaults'): void {
  world.base = pass === 'raised' ? world.server.url : world.defaults.url;
}

/** Prints a pass's resource_exhausted count; in the raised pass, fails when it is more than a small share. */
export function checkExhausted(surface: string, pass: 'raised' | 'defaults', exhausted: number, cases: number): void {
  const label = pass === 'raised' ? 'raised limits' : 'default limits';
  process.stdout.write(`${surface} fuzz, ${label}: ${exhausted} of ${cases} cases answered resource_exhausted\n`);
  if (pass === 'raised') {
    assert.ok(
      exhausted <= Math.ceil(cases * MAX_EXHAUSTED_SHARE),
      `${exhausted} of ${cases} cases met a limit in the raised pass: raise it in RAISED_LIMITS`,
    );
  }
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
