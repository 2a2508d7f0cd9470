// Pins that every verb's error answer reads through the MCP SDK 1.x `Client.callTool`
// (docs/design/mcp-surface.md, "Tool results and errors"): that client checks any
// structuredContent of a tool it has listed against the tool's outputSchema, errors
// included, so an error result carries its `{"error": …}` body as JSON text only. Each
// case runs on both answer paths: the direct path and the SDK transport (a batch of one).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { allVerbs } from '../../src/domain/verbs.js';
import { newId } from '../../src/domain/ids.js';
import { toolsFor } from '../../src/mcp/verbs/index.js';
import { testDatabase } from '../helpers/db.js';
import { startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_errors_sdk');
const { url } = await startApp(pool, 'instance-errors');

/** Every verb of the registry: the grantable ones and the self verbs. */
const REGISTRY = toolsFor(allVerbs()).map((tool) => tool.name);

/** How many tools/call requests went as a batch of one. */
let batched = 0;

/** Sends each tools/call as a batch of one, which only the SDK transport answers. */
const batchingFetch: typeof fetch = (input, init) => {
  if (init?.method === 'POST' && typeof init.body === 'string') {
    const message = JSON.parse(init.body) as { method?: string };
    if (message.method === 'tools/call') {
      batched += 1;
      return fetch(input, { ...init, body: JSON.stringify([message]) });
    }
  }
  return fetch(input, init);
};

type Path = 'direct' | 'sdk';
const PATHS: Path[] = ['direct', 'sdk'];

/** A connected SDK client that has listed its tools, so callTool checks their outputSchema. */
async function client(credential: string, path: Path): Promise<Client> {
  const c = new Client({ name: `errors-${path}`, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    ...(path === 'sdk' ? { fetch: batchingFetch } : {}),
  });
  await c.connect(transport);
  after(() => c.close());
  const { tools } = await c.listTools();
  assert.ok(tools.length > 0 && tools.every((tool) => tool.outputSchema), 'every listed tool has an outputSchema');
  return c;
}

interface ErrorBody {
  code: string;
  message: string;
  [detail: string]: unknown;
}

/** A call that must fail with this code: callTool does not throw, and content[0] is the error's JSON. */
async function fails(c: Client, name: string, args: Record<string, unknown>, code: string): Promise<ErrorBody> {
  const result = (await c.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name}: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent, undefined, `${name}: an error carries no structuredContent`);
  const first = result.content[0];
  assert.equal(first?.type, 'text', name);
  const body = JSON.parse(first.type === 'text' ? first.text : '') as { error: ErrorBody };
  assert.equal(body.error.code, code, `${name}: ${JSON.stringify(body)}`);
  assert.equal(typeof body.error.message, 'string', name);
  assert.ok(body.error.message.length > 0, name);
  return body.error;
}

async function succeeds(c: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await c.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!result.isError, `${name}: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, `${name}: a success keeps its structuredContent`);
  return result.structuredContent;
}

test('the registry holds the verbs an agent calls', () => {
  for (const name of ['claim_next', 'complete', 'whoami', 'create_todo', 'set_admission_policy']) {
    assert.ok(REGISTRY.includes(name), name);
  }
});

for (const path of PATHS) {
  test(`${path} path: every verb's invalid_argument reads through Client.callTool, naming the field`, async () => {
    const v = await vend(pool, { verbs: allVerbs() });
    const c = await client(v.credential, path);
    const before = batched;
    for (const name of REGISTRY) {
      // The first field its schema refuses: a missing required one, else the unknown one.
      const error = await fails(c, name, { no_such_field: true }, 'invalid_argument');
      assert.equal(typeof error.field, 'string', `${name}: ${JSON.stringify(error)}`);
      assert.ok(error.message.includes(String(error.field)), `${name}: ${JSON.stringify(error)}`);
    }
    assert.equal(batched - before, path === 'sdk' ? REGISTRY.length : 0, 'the calls took the path named');
  });

  test(`${path} path: not_found and forbidden keep their code and message`, async () => {
    const v = await vend(pool, { verbs: ['drain'] });
    const c = await client(v.credential, path);
    const unknown = newId('td');
    for (const name of ['get_todo', 'claim', 'heartbeat', 'complete', 'fail', 'release']) {
      const error = await fails(c, name, { id: unknown }, 'not_found');
      assert.match(error.message, new RegExp(unknown), name);
    }
    const forbidden = await fails(c, 'create_todo', { queue: 'inbox', title: 'not granted' }, 'forbidden');
    assert.match(forbidden.message, /create_todo/);
    assert.match((await fails(c, 'no_such_tool', {}, 'not_found')).message, /no_such_tool/);
  });

  test(`${path} path: conflict from a todo another session holds, and after losing the lease`, async () => {
    const v = await vend(pool, { verbs: allVerbs() });
    const holder = await client(v.credential, path === 'direct' ? 'sdk' : 'direct');
    const me = await client(v.credential, path);
    const created = (await succeeds(holder, 'create_todo', { queue: 'inbox', title: 'held' })) as {
      todo: { id: string };
    };
    await succeeds(holder, 'claim', { id: created.todo.id });
    for (const name of ['heartbeat', 'complete', 'fail', 'release']) {
      const error = await fails(me, name, { id: created.todo.id }, 'conflict');
      assert.match(error.message, /this session never held it/, name);
      assert.equal(error.id, created.todo.id, name);
    }

    const mine = (await succeeds(me, 'create_todo', { queue: 'inbox', title: 'lost' })) as { todo: { id: string } };
    await succeeds(me, 'claim', { id: mine.todo.id });
    await pool.query(
      `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE id = $1`,
      [mine.todo.id],
    );
    await succeeds(holder, 'claim', { id: mine.todo.id });
    for (const name of ['heartbeat', 'complete', 'fail', 'release']) {
      const error = await fails(me, name, { id: mine.todo.id }, 'conflict');
      assert.match(error.message, /you lost it/, name);
    }
  });

  test(`${path} path: deferred from a queue's budget keeps its details`, async () => {
    const v = await vend(pool, { verbs: allVerbs() });
    const c = await client(v.credential, path);
    await succeeds(c, 'set_admission_policy', { queue: 'inbox', policy: { max_in_flight: 1 } });
    await succeeds(c, 'create_todo', { queue: 'inbox', title: 'first' });
    const second = (await succeeds(c, 'create_todo', { queue: 'inbox', title: 'second' })) as { todo: { id: string } };
    await succeeds(c, 'claim_next', {});
    const error = await fails(c, 'claim', { id: second.todo.id }, 'deferred');
    assert.equal(error.queue, 'inbox');
    assert.equal(typeof error.reason, 'string');
    assert.match(error.message, /inbox/);
  });
}
