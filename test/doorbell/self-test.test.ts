// Pins the two-phase doorbell self-test end to end on a real server with the SDK's real
// client: each verdict (pass, unheard with the claude-code hints, no_session, no_stream,
// write_failed), the synthetic todo's fate, and the one-outstanding and hourly limits.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import {
  agent,
  api,
  endpointOf,
  expireTest,
  owner,
  ringOfTest,
  server,
  tool,
  until,
  verdictOf,
  type Body,
  sessionRow,
} from './world.js';

const { pool, url } = await testDatabase('selftest');
const s = await server(url, 'self-test-a');

async function todoRow(id: string) {
  return (await pool.query('SELECT * FROM todos WHERE id = $1', [id])).rows[0] as Record<string, unknown> | undefined;
}

test('a client that claims when the doorbell arrives passes, with claimed_within_seconds', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { name: 'claude-code', claimOnRing: true });
  const start = await tool(a, 'test_doorbell', {});
  assert.equal(await ringOfTest(pool, start.test_id), undefined, 'test_doorbell returns before it rings');
  assert.match(start.test_id, /^dt_/);
  assert.match(start.todo_id, /^td_/);
  assert.equal(start.stream_attached, true);
  assert.equal(typeof start.server_version, 'string');
  assert.ok(Date.parse(start.report_after) > Date.now() + 55_000);
  assert.deepEqual(start.channel_capability.clients, [{ name: 'claude-code', version: '9.9.9' }]);
  assert.equal(start.channel_capability.server_advertised, true);
  assert.match(start.channel_capability.note, /cannot observe/);
  assert.equal(a.heard.length, 0, 'nothing rings before the call returned');

  const report = await verdictOf(() => tool(a, 'get_doorbell_test', { test_id: start.test_id }));
  assert.equal(report.verdict, 'pass');
  assert.equal(typeof report.claimed_within_seconds, 'number');
  assert.ok(report.claimed_within_seconds >= 0 && report.claimed_within_seconds < 15);
  assert.equal(report.delivered.written, true);
  assert.equal(report.delivered.session_id, a.sessionId);
  assert.deepEqual(report.hints, []);
  const ring = a.heard[0];
  assert.equal(ring?.meta.kind, 'doorbell_test');
  assert.equal(ring?.meta.todo_id, start.todo_id);
  assert.match(ring?.content ?? '', /No work is needed/);
  const recorded = await ringOfTest(pool, start.test_id);
  assert.equal(recorded?.id, ring?.meta.ring_id, 'meta.ring_id and the row agree');
  assert.equal(recorded?.ack_via, 'claim');
  const todo = await todoRow(start.todo_id);
  assert.equal(todo?.state, 'done');
  assert.equal(todo?.synthetic, true);
  assert.match(JSON.stringify(todo?.result), /no work was needed/);
});

test('a connected claude-code client that ignores the doorbell is unheard, with the claude-code hints', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { name: 'claude-code' });
  // Long enough that a slow ring (a loaded CI machine) still reads pending before expireTest ends it.
  const start = await tool(a, 'test_doorbell', { wait_seconds: 60 });
  await until(async () => (await ringOfTest(pool, start.test_id)) !== undefined, 'the ring to be delivered');
  assert.equal((await tool(a, 'get_doorbell_test', { test_id: start.test_id })).verdict, 'pending');
  await expireTest(pool, start.test_id);
  const report = await tool(a, 'get_doorbell_test', { test_id: start.test_id });
  assert.equal(report.verdict, 'unheard');
  assert.equal(report.delivered.written, true, 'delivered, but not heard');
  assert.equal(report.claimed_within_seconds, null);
  const hints = report.hints as string[];
  assert.ok(hints[0]?.includes(`--dangerously-load-development-channels server:${ep.slug} `), hints[0]);
  assert.ok(hints.some((h) => h.includes(`--allowedTools mcp__${ep.slug},`)));
  assert.match(
    hints.at(-1) ?? '',
    /^Troubleshooting: http:\/\/[^ <>]+\/docs\/doorbell /,
    "the MCP verb links this server's own page",
  );
  assert.ok(hints.some((h) => /claude -p cannot be woken/.test(h)));
  assert.equal(a.heard.length, 1);
});

test('an endpoint with nothing connected gets no_session from the operator route', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const path = `/api/v1/endpoints/${ep.slug}/doorbell-tests`;
  const start = await api(s.url, me.token, 'POST', path, { wait_seconds: 30 });
  assert.equal(start.status, 201);
  assert.equal(start.body.stream_attached, false);
  const report = await verdictOf(
    async (): Promise<unknown> => (await api(s.url, me.token, 'GET', `${path}/${start.body.test_id}`)).body,
  );
  assert.equal(report.verdict, 'no_session');
  assert.match(report.hints[0], /Nothing is connected to this endpoint/);
  assert.equal(report.delivered.written, false);
});

test('a session without a stream gets no_stream', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { name: 'crush', stream: false });
  assert.equal((await sessionRow(pool, a.sessionId))?.stream_open, false);
  const start = await tool(a, 'test_doorbell', {});
  assert.equal(start.stream_attached, false);
  const report = await verdictOf(() => tool(a, 'get_doorbell_test', { test_id: start.test_id }));
  assert.equal(report.verdict, 'no_stream');
  assert.match(report.hints[0], /notifications\/claude\/channel/);
});

test('a stream that closes during the write gets write_failed, and no ring row', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential);
  const reader = await agent(pool, s.url, ep.credential, { stream: false });
  const registry = s.streams;
  const write = registry.ring.bind(registry);
  registry.ring = async (sessionId, params) => {
    if (sessionId === a.sessionId) {
      await a.client.close();
      await until(async () => (await sessionRow(pool, a.sessionId))?.stream_open === false, 'the stream to close');
    }
    return write(sessionId, params);
  };
  try {
    const start = await tool(a, 'test_doorbell', { wait_seconds: 10 });
    const report = await verdictOf(() => tool(reader, 'get_doorbell_test', { test_id: start.test_id }));
    assert.equal(report.verdict, 'write_failed');
    assert.match(report.hints[0], /The stream closed during the write/);
    assert.equal(await ringOfTest(pool, start.test_id), undefined, 'a ring row only for a successful write');
  } finally {
    registry.ring = write;
  }
});

test('one test may be outstanding per endpoint, and at most 6 start an hour', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { stream: false });
  const first = await tool(a, 'test_doorbell', {});
  const again = await tool(a, 'test_doorbell', {});
  assert.equal(again.error?.code, 'resource_exhausted');
  assert.equal(again.error?.test_id, first.test_id);
  // It says when to come back: when the running test's report is due.
  assert.ok(Number(again.error?.retry_after_seconds) >= 1, JSON.stringify(again.error));
  await expireTest(pool, first.test_id);
  for (let i = 2; i <= 6; i++) {
    const next = await tool(a, 'test_doorbell', {});
    assert.match(next.test_id, /^dt_/, `test ${i} of the hour starts once the one before is over`);
    await expireTest(pool, next.test_id);
  }
  const seventh = await tool(a, 'test_doorbell', {});
  assert.equal(seventh.error?.code, 'resource_exhausted');
  assert.match(seventh.error?.message, /at most 6 doorbell tests an hour/);
  const count = await pool.query('SELECT count(*)::int AS n FROM doorbell_tests WHERE endpoint_id = $1', [ep.id]);
  assert.equal(count.rows[0].n, 6);
});

test('wait_seconds outside 10–300 is invalid_argument naming the field', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { stream: false });
  const body = await tool(a, 'test_doorbell', { wait_seconds: 5 });
  assert.equal(body.error?.code, 'invalid_argument');
  assert.match(body.error?.message, /wait_seconds/);
});

test('when a test expires its synthetic todo is deleted and the report is kept', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { stream: false });
  const start = await tool(a, 'test_doorbell', { wait_seconds: 10 });
  await verdictOf(() => tool(a, 'get_doorbell_test', { test_id: start.test_id }));
  await expireTest(pool, start.test_id);
  const sweep = s.doorbellAck.sweeps.find((w) => w.name === 'doorbell_tests');
  assert.ok(sweep);
  await sweep.run();
  assert.equal(await todoRow(start.todo_id), undefined);
  assert.equal((await tool(a, 'get_doorbell_test', { test_id: start.test_id })).verdict, 'no_stream');
});

test("a claim that lands before the ring's row is recorded still acknowledges it and reports the timing", async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential, { claimOnRing: true });
  const ringer = s.doorbellAck.outcomes;
  const record = ringer.delivered.bind(ringer);
  ringer.delivered = async (ring) => {
    await until(async () => (await todoRow(ring.todoId ?? ''))?.state === 'done', 'the claim before the row');
    return record(ring);
  };
  try {
    const start = await tool(a, 'test_doorbell', {});
    await until(async () => (await ringOfTest(pool, start.test_id)) !== undefined, 'the late ring row');
    const recorded = await ringOfTest(pool, start.test_id);
    assert.equal(recorded?.ack_via, 'claim', 'inserted already acknowledged by the earlier claim');
    assert.equal(recorded?.acked_session_id, a.sessionId);
    let report: Body = null;
    await until(async () => {
      report = await tool(a, 'get_doorbell_test', { test_id: start.test_id });
      return report.delivered?.at !== null;
    }, 'the report to carry the late row');
    assert.equal(report.verdict, 'pass');
    assert.equal(report.delivered.written, true);
    assert.equal(report.delivered.session_id, a.sessionId);
    assert.equal(typeof report.claimed_within_seconds, 'number');
    const todo = await todoRow(start.todo_id);
    assert.ok(
      (recorded?.sent_at as Date) <= (todo?.claimed_at as Date),
      'sent_at is the write, not the late insert: it comes before the claim',
    );
  } finally {
    ringer.delivered = record;
  }
});

test('the operator route names a bad wait_seconds and refuses a revoked endpoint', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const path = `/api/v1/endpoints/${ep.slug}/doorbell-tests`;
  const bad = await api(s.url, me.token, 'POST', path, { wait_seconds: 301 });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'invalid_argument');
  assert.match(bad.body.error.message, /wait_seconds/);
  assert.equal((await api(s.url, me.token, 'POST', `/api/v1/endpoints/${ep.slug}/revoke`)).status, 200);
  const revoked = await api(s.url, me.token, 'POST', path, {});
  assert.equal(revoked.status, 409);
  assert.equal(revoked.body.error.code, 'conflict');
});

test('a claim after wait_seconds completes the synthetic todo but the verdict is unheard', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const a = await agent(pool, s.url, ep.credential);
  const start = await tool(a, 'test_doorbell', { wait_seconds: 10 });
  await until(async () => (await ringOfTest(pool, start.test_id)) !== undefined, 'the ring to be delivered');
  await expireTest(pool, start.test_id);
  const late = await tool(a, 'claim', { id: start.todo_id });
  assert.equal(late.todo.state, 'done');
  const report = await tool(a, 'get_doorbell_test', { test_id: start.test_id });
  assert.equal(report.verdict, 'unheard');
  assert.equal(report.claimed_within_seconds, null);
});
