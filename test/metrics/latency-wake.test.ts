// Pins the two wake-up histograms (docs/metrics.md, "Latency") on a real instance: a claim
// observes each open todo ring it acknowledged, from the ring record's sent_at, once; a
// ring already acknowledged is not observed again; a ring recorded after its claim is
// observed by the writer's insert; a waiting claim_next or next_message is timed once, by
// how it ended. And the endpoint cap: past SWITCHBOARD_METRICS_MAX_ENDPOINTS, an endpoint's
// queue wait, run time and delivery land in `_other`, add no series, and count no
// collection error.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { newId } from '../../src/domain/ids.js';
import { RingRowWriter } from '../../src/doorbell/ring-writer.js';
import { Metrics } from '../../src/metrics/index.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { agent, recordedRing, tool, until, type Agent } from '../doorbell/world.js';
import { vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('metrics_latency_wake');
// Two endpoint labels: the first test's endpoint and one more; the cap test fills them.
const server = await startTestServer(url, 'wake', { SWITCHBOARD_METRICS_MAX_ENDPOINTS: '2' });

const scrape = async () => (await fetch(`${server.url}/metrics`)).text();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const sample = (text: string, series: string, labels: string) =>
  Number(new RegExp(`^${series}\\{${escape(labels)}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);

/** A connected agent whose stream is open, so each todo it creates is rung to it. */
async function listening(): Promise<{ slug: string; agent: Agent; endpointId: string }> {
  const { endpoint, credential } = await vend(pool, { queues: ['inbox'] });
  return { slug: endpoint.slug, endpointId: endpoint.id, agent: await agent(pool, server.url, credential) };
}

/** Creates a todo and waits until its ring is recorded: a claim then acknowledges that row. */
async function rung(a: Agent): Promise<{ id: string; ring: { id: string; sent_at: Date } }> {
  const id = (await tool(a, 'create_todo', { queue: 'inbox', title: 'work' })).todo.id as string;
  return { id, ring: await recordedRing(pool, id) };
}

const claimed = async (a: Agent, args: Record<string, unknown>): Promise<void> => {
  const body = await tool(a, 'claim', args);
  assert.ok(!body.isError, JSON.stringify(body));
};

test('a claim observes each open ring of its todo once, from the ring record; an acknowledged ring is not observed', async () => {
  const { slug, agent: a } = await listening();
  const labels = `endpoint="${slug}",queue="inbox"`;
  const delivery = (text: string, part: string, extra = '') =>
    sample(text, `switchboard_doorbell_delivery_seconds_${part}`, `${extra}${labels}`);

  // Rung an hour ago (the record's sent_at moved back): the claim observes at least 3600 s.
  const early = await rung(a);
  await pool.query(`UPDATE doorbell_rings SET sent_at = sent_at - interval '1 hour' WHERE id = $1`, [early.ring.id]);
  await claimed(a, { id: early.id });
  const first = await scrape();
  assert.equal(delivery(first, 'count'), 1, first);
  assert.ok(delivery(first, 'sum') >= 3600);
  assert.equal(delivery(first, 'bucket', 'le="1200",'), 0, 'the back-dated ring is over 1200 s');
  assert.equal(delivery(first, 'bucket', 'le="21600",'), 1);

  // Heard with ack_doorbell first: the claim finds no open ring and observes nothing. The
  // first claim is settled first: a session holding a claim is not rung ("Who is rung").
  assert.ok(!(await tool(a, 'complete', { id: early.id })).isError);
  const acked = await rung(a);
  assert.equal((await tool(a, 'ack_doorbell', { ring_id: acked.ring.id })).state, 'acknowledged');
  await claimed(a, { id: acked.id });
  // And a todo nobody rang (created while no stream of its endpoint was open) is not observed either.
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const deaf = await agent(pool, server.url, credential, { stream: false });
  const quiet = (await tool(deaf, 'create_todo', { queue: 'inbox', title: 'unrung' })).todo.id as string;
  await claimed(deaf, { id: quiet });
  const after = await scrape();
  assert.equal(delivery(after, 'count'), 1, 'neither claim acknowledged a ring');
  const rows = await pool.query(`SELECT count(*)::int AS n FROM doorbell_rings WHERE todo_id = $1`, [quiet]);
  assert.equal(rows.rows[0].n, 0, 'the quiet todo was never rung');
});

test('a ring recorded after its claim is observed by the insert that records it acknowledged', async () => {
  const { slug, agent: a, endpointId } = await listening();
  const { id } = await rung(a);
  await claimed(a, { id });
  // A second doorbell for the todo whose record reaches the writer only now, written an
  // hour ago: the claim came first, so the insert finds its attempt and records it heard.
  const metrics = new Metrics({ defaults: false });
  const writer = new RingRowWriter({ db: pool, log: pino({ level: 'silent' }), deliveries: metrics });
  writer.record({
    id: newId('rg'),
    endpointId,
    sessionId: a.sessionId,
    todoId: id,
    kind: 'todo',
    queue: 'inbox',
    synthetic: false,
    claimsBefore: 0,
    writtenAt: Date.now() - 3_600_000,
  });
  await writer.flush();
  assert.equal(writer.stats.inserted, 1);
  const { values } = await metrics.latency.doorbellDelivery.get();
  const count = values.filter((v) => v.metricName === 'switchboard_doorbell_delivery_seconds_count');
  assert.deepEqual(
    count.map((v) => [v.labels, v.value]),
    [[{ endpoint: slug, queue: 'inbox' }, 1]],
  );
  const sum = values.find((v) => v.metricName === 'switchboard_doorbell_delivery_seconds_sum')?.value ?? 0;
  assert.ok(sum > 3000, `acked_at - sent_at is about an hour: ${sum}`);
});

test('each waiting claim_next and next_message is timed once, by how it ended', async () => {
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const waiter = await agent(pool, server.url, credential, { stream: false });
  const maker = await agent(pool, server.url, credential, { stream: false });
  const closing = await agent(pool, server.url, credential, { stream: false });
  const count = (text: string, verb: string, outcome: string) =>
    sample(text, 'switchboard_long_poll_wait_seconds_count', `verb="${verb}",outcome="${outcome}"`);
  const outcomes = [
    ['claim_next', 'work'],
    ['claim_next', 'timeout'],
    ['next_message', 'timeout'],
    ['next_message', 'closed'],
    ['claim_next', 'closed'],
    ['claim_next', 'gone'],
    ['claim_next', 'error'],
  ] as const;
  const before = await scrape();
  for (const [verb, outcome] of outcomes) assert.ok(before.includes(`verb="${verb}",outcome="${outcome}"`));

  // work: the wait is answered by a todo made while it waits.
  const waiting = tool(waiter, 'claim_next', { wait_seconds: 30 });
  await until(() => server.waiters.waiting() === 1, 'the claim_next to wait');
  const made = (await tool(maker, 'create_todo', { queue: 'inbox', title: 'wake' })).todo.id as string;
  assert.equal((await waiting).todo.id, made);
  // timeout: nothing comes within a second.
  assert.equal((await tool(waiter, 'claim_next', { wait_seconds: 1 })).empty, true);
  assert.equal((await tool(waiter, 'next_message', { wait_seconds: 1 })).empty, true);
  // closed: its session closes (from another call) while it waits.
  const held = tool(closing, 'next_message', { wait_seconds: 30 });
  await until(() => server.waiters.waiting() === 1, 'the next_message to wait');
  await closing.transport.terminateSession();
  await held.catch(() => undefined);
  await until(() => server.waiters.waiting() === 0, 'the closed wait to end');

  const text = await scrape();
  const moved = outcomes.map(([verb, outcome]) => count(text, verb, outcome) - count(before, verb, outcome));
  assert.deepEqual(moved, [1, 1, 1, 1, 0, 0, 0], text);
  assert.ok(
    sample(text, 'switchboard_long_poll_wait_seconds_bucket', 'le="1",verb="claim_next",outcome="timeout"') === 0,
    'a timeout of 1 s lands above 1 s',
  );
});

test('past the endpoint cap, every endpoint histogram lands in _other, adds no series and counts no collection error', async () => {
  // Whatever ran before, two endpoints that claim fill both labels.
  for (let i = 0; i < 2; i++) {
    const { agent: a } = await listening();
    await claimed(a, { id: (await rung(a)).id });
  }
  /** One endpoint's whole cycle: rung, claimed (queue wait, delivery), completed (run). */
  const cycle = async () => {
    const who = await listening();
    const { id } = await rung(who.agent);
    await claimed(who.agent, { id });
    assert.ok(!(await tool(who.agent, 'complete', { id })).isError);
    return who.slug;
  };
  const families = [
    'switchboard_queue_wait_seconds',
    'switchboard_run_seconds',
    'switchboard_doorbell_delivery_seconds',
  ];
  /** The series (name and labels, no value) of the endpoint histograms, and the collection-error lines with values. */
  const shape = (text: string) => ({
    series: text
      .split('\n')
      .filter((l) => families.some((f) => l.startsWith(f)))
      .map((l) => l.split(' ')[0])
      .sort(),
    errors: text.split('\n').filter((l) => l.startsWith('switchboard_collection_errors_total')),
  });
  const other = (text: string) => ({
    wait: sample(text, 'switchboard_queue_wait_seconds_count', 'endpoint="_other",queue="inbox"'),
    run: sample(text, 'switchboard_run_seconds_count', 'endpoint="_other",queue="inbox",outcome="done"'),
    delivery: sample(text, 'switchboard_doorbell_delivery_seconds_count', 'endpoint="_other",queue="inbox"'),
  });

  const before = await scrape();
  const first = await cycle();
  const middle = await scrape();
  assert.deepEqual(other(middle), {
    wait: other(before).wait + 1,
    run: other(before).run + 1,
    delivery: other(before).delivery + 1,
  });
  const second = await cycle();
  const last = await scrape();
  assert.deepEqual(other(last), {
    wait: other(middle).wait + 1,
    run: other(middle).run + 1,
    delivery: other(middle).delivery + 1,
  });
  assert.deepEqual(shape(last), shape(middle), 'a second endpoint past the cap adds no series and no collection error');
  assert.deepEqual(shape(middle).errors, shape(before).errors, 'no collection error was counted');
  for (const slug of [first, second]) assert.ok(!last.includes(`"${slug}"`), `${slug} is past the cap: in no series`);
});
