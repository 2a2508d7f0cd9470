// Pins every verb's output schema (MCP 2025-06-18, "Output Schema"): tools/list carries an
// `outputSchema` of type object for every tool, and real successful answers — through a
// real server (startServer: pump, ring writer, self-test ringer) and the SDK's client,
// which checks each answer against the listed schema itself — parse with the verb's zod
// schema and lose nothing to it: a field an answer gains must be described before it ships.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { allVerbs } from '../../src/domain/verbs.js';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { toolsFor, verbFor } from '../../src/mcp/verbs/index.js';
import { insertHuman } from '../../src/store/humans.js';
import { answerTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agent, server, until, type Agent, type Body } from '../doorbell/world.js';

const { pool, url } = await testDatabase('mcp_output_schema');
// Notify hooks may reach this file's loopback receiver only.
const s = await server(url, 'output-schema', {
  SWITCHBOARD_PUSH_ALLOW_HTTP: 'on',
  SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '127.0.0.0/8',
});

const receiver = createServer((_req, res) => {
  res.statusCode = 204;
  res.end();
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const address = receiver.address();
const HOOK_URL = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;

const human = await insertHuman(pool, {
  id: newId('hu'),
  email: 'output-schema@example.test',
  displayName: 'output schema',
  role: 'member',
});
const vended = await vendEndpoint(
  { db: pool, publicUrl: 'http://switchboard.test' },
  human.id,
  {
    name: 'every verb',
    queues: ['inbox', 'builds'],
    verbs: ['drain', 'create', 'messages', 'admission', 'hooks', 'webhooks', 'events', 'quarantine'],
  },
  new Date(),
);
const me = await agent(pool, s.url, vended.credential, { name: 'output-schema' });
const other = await agent(pool, s.url, vended.credential, { name: 'other-session' });
// The SDK's client checks every answer of a tool it has listed against its outputSchema.
const listed = (await me.client.listTools()).tools;
await other.client.listTools();

/** Which verbs answered, and how often; every verb must have. */
const answered = new Map<string, number>();

/** The answer parses with the verb's output schema, and nothing in it is undeclared. */
function conforms(name: string, result: CallToolResult): Body {
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.structuredContent)}`);
  const content = result.structuredContent;
  assert.ok(content, `${name}: no structuredContent`);
  const first = result.content[0];
  assert.deepEqual(JSON.parse(first?.type === 'text' ? first.text : ''), content, `${name}: content[0] differs`);
  const parsed = verbFor(allVerbs(), name).output.safeParse(content);
  assert.ok(parsed.success, `${name}: ${parsed.error?.message}\n${JSON.stringify(content)}`);
  assert.deepEqual(parsed.data, content, `${name}: an answer field its output schema does not describe`);
  answered.set(name, (answered.get(name) ?? 0) + 1);
  return content;
}

async function call(a: Agent, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  return conforms(name, (await a.client.callTool({ name, arguments: args })) as CallToolResult);
}

/** The session a todo's doorbell rang (the endpoint's streams take turns) and the ring's id. */
async function heardFor(todoId: string, among: Agent[]): Promise<{ heard: Agent; ringId: string }> {
  const ringOf = (a: Agent) => a.heard.find((h) => h.meta.todo_id === todoId)?.meta.ring_id;
  await until(() => among.some((a) => ringOf(a) !== undefined), `the doorbell of ${todoId}`, 20_000);
  const heard = among.find((a) => ringOf(a) !== undefined) ?? me;
  return { heard, ringId: ringOf(heard) ?? '' };
}

test('tools/list carries an object outputSchema for every tool, the JSON Schema of its zod schema', () => {
  const all = toolsFor(allVerbs());
  assert.deepEqual(
    listed.map((t) => t.name),
    all.map((t) => t.name),
  );
  for (const tool of listed) {
    assert.equal(tool.outputSchema?.type, 'object', tool.name);
    assert.deepEqual(tool.outputSchema, all.find((t) => t.name === tool.name)?.outputSchema, tool.name);
    // Every answer may gain a field without breaking a client that checks answers.
    assert.equal(JSON.stringify(tool.outputSchema).includes('"additionalProperties":false'), false, tool.name);
  }
});

test('the drain, create and admission verbs answer what their output schemas say', async () => {
  await call(me, 'whoami');
  const created = await call(me, 'create_todo', {
    queue: 'inbox',
    title: 'with everything',
    body: 'the body',
    payload: { n: [1, 2] },
    kind: 'check',
    idempotency_key: 'output-1',
    max_attempts: 3,
  });
  assert.equal(created.created, true);
  assert.equal(
    (await call(me, 'create_todo', { queue: 'inbox', title: 'again', idempotency_key: 'output-1' })).created,
    false,
  );
  await call(me, 'get_todo', { id: created.todo.id });

  // A budget: pending todos carry `admission`, a claim its headroom.
  const policy = {
    max_in_flight: 5,
    max_claims_per_window: 10,
    window: { period: 'week', tz: 'UTC', start: '09:00', weekday: 'Mon' },
  };
  assert.equal((await call(me, 'set_admission_policy', { queue: 'builds', policy })).created, true);
  const budgeted = await call(me, 'create_todo', { queue: 'builds', title: 'budgeted' });
  assert.ok((await call(me, 'get_todo', { id: budgeted.todo.id })).todo.admission);
  const page = await call(me, 'list_todos', { limit: 1 });
  assert.ok(page.todos[0].admission && page.next_cursor);
  await call(me, 'list_todos', { cursor: page.next_cursor, include_synthetic: true });
  await call(me, 'admission_status');
  await call(me, 'admission_status', { queue: 'builds' });
  const withHeadroom = await call(me, 'claim_next', { queue: 'builds', lease_seconds: 60 });
  assert.ok(withHeadroom.admission);
  await call(me, 'heartbeat', { id: withHeadroom.todo.id, lease_seconds: 120 });
  await call(me, 'complete', { id: withHeadroom.todo.id, result: { ok: true } });

  const claimed = await call(me, 'claim', { id: created.todo.id });
  assert.equal(claimed.todo.body, 'the body');
  await call(me, 'complete', { id: claimed.todo.id });
  // One attempt only: the failure dead-letters it, so it never comes back to this queue.
  const once = await call(me, 'create_todo', { queue: 'inbox', title: 'fails once', max_attempts: 1 });
  await call(me, 'claim', { id: once.todo.id });
  assert.equal((await call(me, 'fail', { id: once.todo.id, error: 'no', result: [1] })).todo.next_retry_at, null);
  const next = await call(me, 'create_todo', { queue: 'inbox', title: 'to release' });
  await call(me, 'claim_next', { queue: 'inbox' });
  await call(me, 'release', { id: next.todo.id });
  await call(me, 'claim', { id: next.todo.id });
  await call(me, 'complete', { id: next.todo.id });
  // Asking a human (docs/design/ask-human.md): the parked todo's read, and the claim that carries the answer.
  const asked = await call(me, 'create_todo', { queue: 'inbox', title: 'to ask' });
  await call(me, 'claim', { id: asked.todo.id });
  await call(me, 'ask_human', { id: asked.todo.id, question: 'which?', choices: ['a', 'b'], timeout_seconds: 600 });
  assert.equal((await call(me, 'get_todo', { id: asked.todo.id })).todo.waiting.reason, 'waiting_on_human');
  await answerTodo({ db: pool, defaultLeaseSeconds: 300 }, vended.endpoint.id, asked.todo.id, human, { choice: 1 });
  const answered = await call(me, 'claim', { id: asked.todo.id });
  assert.equal(answered.answers[0].choice, 1);
  assert.equal(answered.prior_attempts[0].ask.outcome, 'answered');
  assert.equal((await call(me, 'get_todo', { id: asked.todo.id })).answers.length, 1);
  await call(me, 'complete', { id: asked.todo.id });

  // Nothing ready: empty; a paused budget holding work back: empty with `deferred`.
  assert.deepEqual(await call(me, 'claim_next', { queue: 'inbox' }), { empty: true });
  await call(me, 'set_admission_policy', {
    queue: 'builds',
    policy: { max_in_flight: 0, max_claims_per_window: null, window: null },
  });
  await call(me, 'create_todo', { queue: 'builds', title: 'held back' });
  const held = await call(me, 'claim_next', { queue: 'builds' });
  assert.equal(held.deferred?.[0]?.reason, 'paused');
  await call(me, 'admission_status', { queue: 'builds' });
  await call(me, 'clear_admission_policy', { queue: 'builds' });
});

test('the message verbs answer what their output schemas say', async () => {
  await call(me, 'list_sessions');
  await call(me, 'send_message', { session_id: other.sessionId, content: 'hello' });
  // The other session hears it on its stream: next_message finds it in flight, or takes it.
  await until(() => other.heard.some((h) => h.meta.kind === 'message') || false, 'the message on the stream');
  const messageId = other.heard.find((h) => h.meta.kind === 'message')?.meta.message_id ?? '';
  await call(other, 'ack_message', { message_id: messageId });
  assert.deepEqual(await call(other, 'next_message'), { empty: true });

  // Without a stream, next_message hands the message out.
  const pull = await agent(pool, s.url, vended.credential, { name: 'no-stream', stream: false });
  await pull.client.listTools();
  await call(me, 'send_message', { session_id: pull.sessionId, content: 'pull me' });
  const taken = await call(pull, 'next_message');
  assert.equal(taken.message.content, 'pull me');
  await call(pull, 'ack_message', { message_id: taken.message.message_id });
});

test('the doorbell verbs answer what their output schemas say, the self-test claim too', async () => {
  const todo = (await call(me, 'create_todo', { queue: 'inbox', title: 'rung, then acknowledged' })).todo;
  const { heard, ringId } = await heardFor(todo.id, [me, other]);
  await s.doorbellAck.writer.flush();
  await until(async () => {
    const result = (await heard.client.callTool({
      name: 'ack_doorbell',
      arguments: { ring_id: ringId },
    })) as CallToolResult;
    if (result.isError) return false;
    conforms('ack_doorbell', result);
    return true;
  }, 'the ring row');
  await call(me, 'claim', { id: todo.id });
  await call(me, 'complete', { id: todo.id });

  const started = await call(me, 'test_doorbell', { wait_seconds: 10 });
  await call(me, 'get_doorbell_test', { test_id: started.test_id });
  // A self-test rings the session that started it.
  await heardFor(started.todo_id, [me]);
  // The synthetic todo's claim completes it at once.
  assert.equal((await call(me, 'claim', { id: started.todo_id })).todo.state, 'done');
  let report: Body = null;
  await until(async () => {
    report = await call(me, 'get_doorbell_test', { test_id: started.test_id });
    return report.verdict !== 'pending';
  }, 'the verdict');
  assert.equal(report.verdict, 'pass');
});

test('the hook and presence verbs answer what their output schemas say', async () => {
  const hook = await call(me, 'create_notify_hook', { url: HOOK_URL, queues: ['inbox'], ignore_presence: true });
  await call(me, 'list_notify_hooks');
  await call(me, 'rotate_notify_hook', { hook_id: hook.hook_id });
  await call(me, 'delete_notify_hook', { hook_id: hook.hook_id });

  await call(me, 'presence');
  await call(me, 'clock_out');
  await call(me, 'clock_in', { for: '2h' });
  await call(me, 'clock_in', { for: 3600 });
});

test('the webhook and event verbs answer what their output schemas say', async () => {
  const made = await call(me, 'create_webhook', { queue: 'builds', provider: 'github', name: 'ci' });
  assert.equal(made.webhook.queue, 'builds');
  assert.match(made.secret, /^whsec_/);
  await call(me, 'list_webhooks');
  const rotated = await call(me, 'rotate_webhook', { webhook_id: made.webhook.id });
  await call(me, 'set_webhook_secret', { webhook_id: made.webhook.id });
  await call(me, 'set_webhook_secret', { webhook_id: made.webhook.id, secret: 'whsec_issuedByGitHubSettings01' });
  const deliver = async (number: number) => {
    const raw = JSON.stringify({ action: 'opened', issue: { number, title: 'x' }, repository: { full_name: 'o/r' } });
    const signature = `sha256=${createHmac('sha256', 'whsec_issuedByGitHubSettings01').update(raw).digest('hex')}`;
    return fetch(new URL(new URL(String(rotated.url)).pathname, s.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-hub-signature-256': signature },
      body: raw,
    });
  };
  const delivered = await deliver(1);
  assert.equal(delivered.status, 201, await delivered.clone().text());
  const { event_id: eventId } = (await delivered.json()) as { event_id: string };
  const listed = await call(me, 'list_webhook_events', { limit: 5 });
  assert.equal(listed.events[0].id, eventId);
  await call(me, 'get_webhook_event', { event_id: eventId });
  const replayed = await call(me, 'replay_webhook_event', { event_id: eventId });
  assert.equal(replayed.replay_of, eventId);

  const webhookId = made.webhook.id;
  await call(me, 'set_webhook_rules', {
    webhook_id: webhookId,
    rules: [
      {
        name: 'issues',
        when: 'event.type == "issues.opened"',
        then: { action: 'route', title: 'Issue {{ payload.issue.number }}' },
      },
    ],
    default: 'drop',
  });
  assert.equal((await call(me, 'get_webhook_rules', { webhook_id: webhookId })).rules.length, 1);
  const dry = await call(me, 'test_webhook_rules', { webhook_id: webhookId, last: 5 });
  assert.equal(dry.results[0].action, 'routed');
  // A gate trusting nobody: the next deliveries (they name no sender) wait in quarantine.
  await call(me, 'set_trusted_actors', { webhook_id: webhookId, actors: [] });
  for (const n of [2, 3]) assert.equal((await (await deliver(n)).json()).disposition, 'quarantined');
  const held = await call(me, 'list_quarantine');
  assert.equal(held.items.length, 2);
  await call(me, 'get_quarantined', { id: held.items[0].id });
  const released = await call(me, 'release_quarantined', { id: held.items[0].id });
  assert.equal(released.todos.length, 1);
  await call(me, 'discard_quarantined', { id: held.items[1].id, reason: 'spam' });
  await call(me, 'set_trusted_actors', { webhook_id: webhookId, actors: null });
  await call(me, 'delete_webhook', { webhook_id: made.webhook.id });
});

test('every verb was called and answered', () => {
  const missing = toolsFor(allVerbs())
    .map((t) => t.name)
    .filter((name) => !answered.has(name));
  assert.deepEqual(missing, []);
});
