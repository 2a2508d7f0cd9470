// The harness for the doorbell acknowledgement tests: real servers (startServer, the
// composition root, with the pump, ring writer, self-test ringer and sweeps) on the
// file's database, humans with API tokens, endpoints vended through the use case, and
// the SDK's real client as the agent — one that claims what its doorbell names, one that
// ignores it, or one whose stream never opens.

import assert from 'node:assert/strict';
import { after } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import type { Pool } from '../../src/db/pool.js';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { newSecret } from '../../src/identity/secrets.js';
import { startServer, type Server } from '../../src/main.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { insertHuman } from '../../src/store/humans.js';
import { toolBody } from '../helpers/tool-result.js';
import { until, WAIT_MS } from '../helpers/wait.js';

export { until };

export async function server(dbUrl: string, name: string, env: Record<string, string> = {}): Promise<Server> {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: dbUrl,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: name,
    SWITCHBOARD_DB_POOL_SIZE: '6',
    ...env,
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const started = await startServer(parsed.config, pino({ level: process.env.SWITCHBOARD_TEST_LOG ?? 'silent' }));
  after(() => started.stop());
  return started;
}

export interface Owner {
  humanId: string;
  /** A human-kind API token (`sbt_…`), as `switchboard login` saves. */
  token: string;
}

export async function owner(pool: Pool): Promise<Owner> {
  const tag = newId('hu').slice(-8).toLowerCase();
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `h-${tag}@example.test`,
    displayName: tag,
    role: 'member',
  });
  const { secret, hash } = newSecret('sbt');
  await insertApiToken(pool, {
    id: newId('tk'),
    humanId: human.id,
    kind: 'human',
    name: 'test',
    tokenHash: hash,
    expiresAt: null,
  });
  return { humanId: human.id, token: secret };
}

export async function endpointOf(pool: Pool, humanId: string, name = 'agent') {
  const vended = await vendEndpoint({ db: pool, publicUrl: 'http://switchboard.test' }, humanId, { name }, new Date());
  return { id: vended.endpoint.id, slug: vended.endpoint.slug, credential: vended.credential };
}

export interface Channel {
  content: string;
  meta: Record<string, string>;
}

export interface AgentOptions {
  /** clientInfo.name sent on initialize. */
  name?: string;
  /** false: the client's GET is answered 405 before it reaches the server, so no stream opens. */
  stream?: boolean;
  /** Claim the todo each doorbell names as soon as it arrives (a client that hears). */
  claimOnRing?: boolean;
  /** false: initialize does not declare claude/channel (a client that long-polls, never rung). */
  channel?: boolean;
}

export interface Agent {
  client: Client;
  transport: StreamableHTTPClientTransport;
  sessionId: string;
  heard: Channel[];
  claims: unknown[];
}

/** An SDK client for this credential; with a stream it is ready once the server recorded the stream. */
export async function agent(pool: Pool, base: string, credential: string, options: AgentOptions = {}): Promise<Agent> {
  const heard: Channel[] = [];
  const claims: unknown[] = [];
  const client = new Client(
    { name: options.name ?? 'test-client', version: '9.9.9' },
    options.channel === false ? {} : { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  const noGet: typeof fetch = async (input, init) =>
    init?.method === 'GET' ? new Response(null, { status: 405 }) : fetch(input, init);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    ...(options.stream === false ? { fetch: noGet } : {}),
  });
  client.fallbackNotificationHandler = async (n) => {
    if (n.method !== 'notifications/claude/channel') return;
    const channel = n.params as unknown as Channel;
    heard.push(channel);
    if (options.claimOnRing) {
      claims.push(await client.callTool({ name: 'claim', arguments: { id: channel.meta.todo_id } }));
    }
  };
  await client.connect(transport);
  after(() => client.close());
  const sessionId = transport.sessionId ?? '';
  if (options.stream !== false) {
    await until(async () => (await sessionRow(pool, sessionId))?.stream_open === true, 'the stream to open');
  }
  return { client, transport, sessionId, heard, claims };
}

export async function sessionRow(pool: Pool, id: string) {
  const res = await pool.query('SELECT * FROM mcp_sessions WHERE id = $1', [id]);
  return res.rows[0] as { stream_open: boolean; unheard: boolean } | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool and API bodies are checked field by field
export type Body = any;

/** Calls a tool and returns its JSON body (with isError when it failed). */
export async function tool(a: Agent, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const result = (await a.client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...(toolBody(result) as object), ...(result.isError ? { isError: true } : {}) };
}

/** An /api/v1 request as the signed-in human. */
export async function api(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer: Body = await res.json();
  return { status: res.status, body: answer };
}

/** Polls get_doorbell_test until the verdict is no longer pending. */
/**
 * Reads the report until it has a verdict. A pass can be frozen by the claim a moment
 * before the writing instance records its ring (completePass fills `delivered` in then,
 * docs/design/doorbell-acknowledgement.md): such a report is read again until it is
 * complete, for up to a second more, so a loaded machine does not read it half-written.
 */
export async function verdictOf(read: () => Promise<unknown>, ms = WAIT_MS): Promise<Body> {
  let report: Body = null;
  await until(
    async () => {
      report = (await read()) as Body;
      return report?.verdict !== undefined && report.verdict !== 'pending';
    },
    'a verdict',
    ms,
  );
  // A pass frozen by a claim that beat the ring's record gets its timing once the writing
  // instance records the ring (self-test-report.ts completePass): on a loaded machine that
  // took over a second, so the wait is as long as the verdict's.
  for (const deadline = Date.now() + ms; report.verdict === 'pass' && !report.delivered?.at;) {
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 25));
    report = (await read()) as Body;
  }
  return report;
}

/** Moves a test's deadline to now, as if wait_seconds had passed (time moves in SQL, not by sleeping). */
export async function expireTest(pool: Pool, testId: string): Promise<void> {
  await pool.query(`UPDATE doorbell_tests SET expires_at = now() WHERE id = $1`, [testId]);
}

/** A todo's ring row, once the writing instance has recorded it (the writer is asynchronous). */
export async function recordedRing(pool: Pool, todoId: string): Promise<{ id: string; sent_at: Date }> {
  let row: { id: string; sent_at: Date } | undefined;
  await until(async () => {
    const res = await pool.query(`SELECT id, sent_at FROM doorbell_rings WHERE todo_id = $1 AND kind = 'todo'`, [
      todoId,
    ]);
    row = res.rows[0] as typeof row;
    return row !== undefined;
  }, `a recorded ring of ${todoId}`);
  assert.ok(row);
  return row;
}

export async function ringOfTest(pool: Pool, testId: string) {
  const res = await pool.query(
    `SELECT r.* FROM doorbell_tests d JOIN doorbell_rings r ON r.endpoint_id = d.endpoint_id AND r.id = d.ring_id
      WHERE d.id = $1`,
    [testId],
  );
  return res.rows[0] as Record<string, unknown> | undefined;
}
