// Pins the webhooks and events verb families over MCP: outside the basic grant, scoped to the caller's own endpoint (another's webhook or event answers not_found, exactly like an unknown id), and a webhook only on a granted queue.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { basicVerbs } from '../../src/domain/verbs.js';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { insertHuman } from '../../src/store/humans.js';
import { testDatabase } from '../helpers/db.js';
import { agent, server, type Agent } from '../doorbell/world.js';

const { pool, url } = await testDatabase('webhook_mcp');
const s = await server(url, 'webhook-mcp');
const human = await insertHuman(pool, {
  id: newId('hu'),
  email: 'webhook-mcp@example.test',
  displayName: 'webhook mcp',
  role: 'member',
});

async function vended(name: string, verbs: string[]): Promise<Agent> {
  const v = await vendEndpoint(
    { db: pool, publicUrl: 'http://switchboard.test' },
    human.id,
    { name, queues: ['inbox'], verbs },
    new Date(),
  );
  return agent(pool, s.url, v.credential, { name });
}

async function call(a: Agent, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await a.client.callTool({ name, arguments: args })) as CallToolResult;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
const body = (r: CallToolResult): any => r.structuredContent;

/** An error result's code: content[0] is the error's JSON (an error carries no structuredContent). */
function errorCode(r: CallToolResult): string {
  assert.equal(r.isError, true, JSON.stringify(r.content));
  const first = r.content[0];
  return (JSON.parse(first?.type === 'text' ? first.text : '{}') as { error: { code: string } }).error.code;
}

test('the families are outside the basic grant and absent from a basic endpoint’s tools', async () => {
  for (const verb of ['create_webhook', 'list_webhook_events', 'replay_webhook_event'])
    assert.ok(!basicVerbs().includes(verb), verb);
  const basic = await vended('basic', basicVerbs());
  const names = (await basic.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes('create_webhook'));
  assert.ok(!names.includes('list_webhook_events'));
});

test('an agent manages only its own webhooks and reads only its own events', async () => {
  const a = await vended('owner', ['drain', 'webhooks', 'events']);
  const b = await vended('stranger', ['drain', 'webhooks', 'events']);
  const made = await call(a, 'create_webhook', { queue: 'inbox', provider: 'gitlab' });
  assert.ok(!made.isError, JSON.stringify(made.content));
  const { webhook, url: hookUrl, secret } = body(made) as { webhook: { id: string }; url: string; secret: string };

  const raw = JSON.stringify({
    object_kind: 'pipeline',
    object_attributes: { id: 9, status: 'failed', ref: 'main' },
    project: { path_with_namespace: 'g/p' },
    user: { username: 'erin' },
  });
  const delivered = await fetch(new URL(new URL(hookUrl).pathname, s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-token': secret, 'x-gitlab-event-uuid': 'u-1' },
    body: raw,
  });
  assert.equal(delivered.status, 201, await delivered.clone().text());
  const { event_id: eventId } = (await delivered.json()) as { event_id: string };

  const mine = body(await call(a, 'list_webhook_events')) as { events: { id: string; type: string }[] };
  assert.deepEqual(
    mine.events.map((e) => [e.id, e.type]),
    [[eventId, 'pipeline.failed']],
  );
  assert.deepEqual(body(await call(b, 'list_webhook_events')).events, []);
  assert.deepEqual(body(await call(b, 'list_webhooks')).webhooks, []);

  assert.equal(errorCode(await call(b, 'get_webhook_event', { event_id: newId('ev') })), 'not_found');
  for (const [name, args] of [
    ['get_webhook_event', { event_id: eventId }],
    ['replay_webhook_event', { event_id: eventId }],
    ['rotate_webhook', { webhook_id: webhook.id }],
    ['set_webhook_secret', { webhook_id: webhook.id }],
    ['delete_webhook', { webhook_id: webhook.id }],
  ] as const) {
    assert.equal(errorCode(await call(b, name, args)), 'not_found', name);
  }
  const count = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events WHERE id = $1', [
    eventId,
  ]);
  assert.equal(count.rows[0]?.n, 1, 'the stranger replayed nothing');
  const replayed = await call(a, 'replay_webhook_event', { event_id: eventId });
  assert.ok(!replayed.isError, JSON.stringify(replayed.content));
  assert.equal(body(replayed).replay_of, eventId);
});

test('an agent’s webhook goes only to one of its queues; a token webhook takes no secret', async () => {
  const a = await vended('queues', ['webhooks']);
  assert.equal(errorCode(await call(a, 'create_webhook', { queue: 'elsewhere' })), 'invalid_argument');
  const secret = await call(a, 'create_webhook', { queue: 'inbox', secret: 'whsec_abcdefghijklmnop' });
  assert.equal(errorCode(secret), 'invalid_argument');
  assert.match(JSON.stringify(secret.content), /secret/);
});
