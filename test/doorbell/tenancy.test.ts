// Pins doorbell tenancy: endpoint B cannot read, acknowledge, claim or start endpoint A's
// rings, tests or synthetic todos, over MCP or /api/v1, even when one human owns both;
// another human cannot reach A's tests at all. Foreign ids answer exactly like unknown ones.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { testDatabase } from '../helpers/db.js';
import { agent, api, endpointOf, owner, ringOfTest, server, tool, until } from './world.js';

const { pool, url } = await testDatabase('doorbell_tenancy');
const s = await server(url, 'tenancy');
const me = await owner(pool);
const stranger = await owner(pool);
const epA = await endpointOf(pool, me.humanId, 'alpha');
const epB = await endpointOf(pool, me.humanId, 'beta');
const a = await agent(pool, s.url, epA.credential);
const b = await agent(pool, s.url, epB.credential);
const started = await tool(a, 'test_doorbell', { wait_seconds: 60 });
await until(async () => (await ringOfTest(pool, started.test_id)) !== undefined, "A's test ring");
const ringA = (await ringOfTest(pool, started.test_id))?.id as string;

test("B's session cannot read A's test: not_found, like an unknown id", async () => {
  const foreign = await tool(b, 'get_doorbell_test', { test_id: started.test_id });
  const unknown = await tool(b, 'get_doorbell_test', { test_id: newId('dt') });
  assert.equal(foreign.error?.code, 'not_found');
  assert.equal(unknown.error?.code, 'not_found');
  const said = (body: { error: { message: string } }, id: RegExp | string) => body.error.message.replace(id, 'X');
  assert.equal(said(foreign, started.test_id as string), said(unknown, /dt_\w+/));
});

test("B's session cannot acknowledge A's ring, and A's ring stays open", async () => {
  assert.equal((await tool(b, 'ack_doorbell', { ring_id: ringA })).error?.code, 'not_found');
  assert.equal((await tool(b, 'ack_doorbell', { ring_id: newId('rg') })).error?.code, 'not_found');
  assert.equal((await ringOfTest(pool, started.test_id))?.acked_at, null);
});

test("B's session cannot claim A's synthetic todo, and cannot name another endpoint to test", async () => {
  assert.equal((await tool(b, 'claim', { id: started.todo_id })).error?.code, 'not_found');
  const named = await tool(b, 'test_doorbell', { endpoint: epA.slug });
  assert.equal(named.error?.code, 'invalid_argument');
  const own = await tool(b, 'test_doorbell', {});
  const row = await pool.query('SELECT endpoint_id FROM doorbell_tests WHERE id = $1', [own.test_id]);
  assert.equal(row.rows[0].endpoint_id, epB.id, "B's test is B's own");
});

test("the owner reading A's test under B's route gets not_found", async () => {
  const path = `/api/v1/endpoints/${epB.slug}/doorbell-tests/${started.test_id}`;
  const res = await api(s.url, me.token, 'GET', path);
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'not_found');
  const ownRoute = await api(s.url, me.token, 'GET', `/api/v1/endpoints/${epA.slug}/doorbell-tests/${started.test_id}`);
  assert.equal(ownRoute.status, 200, 'the owner reads it under its own endpoint');
  assert.equal(ownRoute.body.test_id, started.test_id);
});

test("another human can neither start nor read A's tests", async () => {
  const base = `/api/v1/endpoints/${epA.slug}/doorbell-tests`;
  const start = await api(s.url, stranger.token, 'POST', base, {});
  assert.equal(start.status, 404);
  assert.equal(start.body.error.code, 'not_found');
  const read = await api(s.url, stranger.token, 'GET', `${base}/${started.test_id}`);
  assert.equal(read.status, 404);
  const count = await pool.query('SELECT count(*)::int AS n FROM doorbell_tests WHERE endpoint_id = $1', [epA.id]);
  assert.equal(count.rows[0].n, 1, 'nothing was started on A');
});

test('an unauthenticated request to the doorbell-test routes is refused', async () => {
  const res = await fetch(`${s.url}/api/v1/endpoints/${epA.slug}/doorbell-tests`, { method: 'POST' });
  assert.equal(res.status, 401);
});
