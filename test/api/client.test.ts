// Pins the typed client (src/client/): each group against a real server, every answer
// exactly the shape its contract schema declares, and retries of 429 after Retry-After.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import type { z } from 'zod';
import { Switchboard, SwitchboardError } from '../../src/client/index.js';
import { budgetListOut, budgetSetOut } from '../../src/contract/budgets.js';
import { credentialOut, endpointListOut, endpointShowOut } from '../../src/contract/endpoints.js';
import { scheduleListOut, scheduleOneOut } from '../../src/contract/schedules.js';
import { todoListOut, todoOneOut, todoPushedOut, todoShowOut, todosPushedOut } from '../../src/contract/todos.js';
import { eventListOut, webhookCreatedOut, webhookListOut } from '../../src/contract/webhooks.js';
import { apiHarness, makePeople } from './app.js';

const h = await apiHarness('api_client');
const { member } = await makePeople(h);
await h.app.listen({ host: '127.0.0.1', port: 0 });
const address = h.app.server.address();
assert.ok(address && typeof address === 'object');
const sb = new Switchboard({ url: `http://127.0.0.1:${address.port}`, token: member.token });

/** The answer is exactly what the schema declares: nothing missing, nothing extra. */
function conforms(schema: z.ZodType, answer: unknown, label: string): void {
  assert.deepEqual(schema.parse(answer), answer, `${label}: the answer has fields its schema does not declare`);
}

const vended = await sb.endpoints.vend({ name: 'client test', queues: ['inbox'] });
const slug = vended.endpoint.slug;

test('endpoints: vend, list and show answer their declared shapes', async () => {
  conforms(credentialOut, vended, 'vend');
  conforms(endpointListOut, await sb.endpoints.list(), 'list');
  const shown = await sb.endpoints.show(slug);
  conforms(endpointShowOut, shown, 'show');
  assert.equal(shown.endpoint.id, vended.endpoint.id);
});

test('todos: push one and many, list, show, cancel and retry', async () => {
  const one = await sb.todos.push(slug, { queue: 'inbox', title: 'one', idempotency_key: 'k1' });
  conforms(todoPushedOut, one, 'push');
  assert.equal(one.created, true);
  assert.equal((await sb.todos.push(slug, { queue: 'inbox', title: 'one', idempotency_key: 'k1' })).created, false);
  const many = await sb.todos.pushMany(slug, [
    { queue: 'inbox', title: 'two' },
    { queue: 'inbox', title: 'three', payload: { n: 3 } },
  ]);
  conforms(todosPushedOut, many, 'push many');
  assert.equal(many.created, 2);
  const list = await sb.todos.list(slug, { limit: 2 });
  conforms(todoListOut, list, 'list');
  assert.equal(list.todos.length, 2);
  assert.ok(list.next_cursor);
  conforms(todoShowOut, await sb.todos.show(one.todo.id), 'show');
  const canceled = await sb.todos.cancel(one.todo.id);
  conforms(todoOneOut, canceled, 'cancel');
  assert.equal(canceled.todo.state, 'canceled');
  assert.equal((await sb.todos.retry(one.todo.id)).todo.state, 'pending');
});

test('a refusal throws SwitchboardError with the API’s code and field', async () => {
  await assert.rejects(
    sb.todos.push(slug, { queue: 'nowhere', title: 'x' }),
    (err: unknown) =>
      err instanceof SwitchboardError &&
      err.code === 'invalid_argument' &&
      err.status === 400 &&
      err.details?.field === 'queue',
  );
});

test('webhooks and events: create, list, and an empty history', async () => {
  const made = await sb.webhooks.create(slug, { queue: 'inbox' });
  conforms(webhookCreatedOut, made, 'create');
  conforms(webhookListOut, await sb.webhooks.list(slug), 'list');
  conforms(eventListOut, await sb.events.list(slug, { limit: 5 }), 'events');
  assert.deepEqual(await sb.webhooks.delete(made.webhook.id), { deleted: true });
});

test('schedules: create, list, pause, delete', async () => {
  const made = await sb.schedules.create(slug, { queue: 'inbox', cron: '0 9 * * *', tz: 'UTC', title: 'daily' });
  conforms(scheduleOneOut, made, 'create');
  conforms(scheduleListOut, await sb.schedules.list(slug), 'list');
  assert.equal((await sb.schedules.update(slug, made.schedule.id, { paused: true })).schedule.paused, true);
  assert.equal((await sb.schedules.delete(slug, made.schedule.id)).deleted, true);
});

test('budgets: set, list, clear', async () => {
  const set = await sb.budgets.set(slug, 'inbox', { max_in_flight: 2, max_claims_per_window: null, window: null });
  conforms(budgetSetOut, set, 'set');
  assert.equal(set.created, true);
  conforms(budgetListOut, await sb.budgets.list(), 'list');
  assert.equal((await sb.budgets.clear(slug, 'inbox')).deleted, true);
});

test('a 429 with Retry-After is retried after that wait; past the retries it throws', async () => {
  const seen: number[] = [];
  const stub = createServer((request, response) => {
    seen.push(Date.now());
    if (seen.length <= 2) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      response.end(JSON.stringify({ error: { code: 'resource_exhausted', message: 'rate limited' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ endpoints: [] }));
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  after(() => stub.close());
  const port = (stub.address() as { port: number }).port;
  const client = new Switchboard({ url: `http://127.0.0.1:${port}`, token: 'sbt_x' });
  assert.deepEqual(await client.endpoints.list(), { endpoints: [] });
  assert.equal(seen.length, 3);
  assert.ok((seen[1] ?? 0) - (seen[0] ?? 0) >= 950, 'waited the Retry-After');
  seen.length = 0;
  const impatient = new Switchboard({ url: `http://127.0.0.1:${port}`, token: 'sbt_x', retries: 1 });
  await assert.rejects(
    impatient.endpoints.list(),
    (err: unknown) => err instanceof SwitchboardError && err.status === 429 && err.retryAfterSeconds === 1,
  );
  assert.equal(seen.length, 2, 'one try and one retry');
});
