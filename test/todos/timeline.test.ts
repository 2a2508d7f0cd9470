// Pins a todo's timeline (src/todos/timeline.ts, docs/design/ask-human.md, "History"):
// assembled from the stored rows oldest first with who did each step — created by its
// human, rung, claimed, asked, answered, timed out, claimed by another session, done —
// steps one transaction took in one instant keep the order they happen in, the reply and
// hand-offs are placed by their time, a cancel is told once, a long history keeps the
// newest entries and says it was cut, and another endpoint's todo has no timeline.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { timeOutAsks } from '../../src/store/asks.js';
import { answerTodo, askHuman, claim, complete } from '../../src/todos/index.js';
import { assembleTimeline, todoTimeline, type TimelineSources } from '../../src/todos/timeline.js';
import { world } from './world.js';

test('a todo asked twice reads created → rung → claimed → asked → answered → claimed → asked → timed out → claimed → done, with who did each', async () => {
  const w = await world('timeline');
  const { todo } = await w.create({ title: 'ship it?' });
  const email = (
    await w.pool.query<{ email: string }>(
      'SELECT h.email FROM humans h JOIN endpoints e ON e.human_id = h.id WHERE e.id = $1',
      [w.endpointId],
    )
  ).rows[0]?.email;
  // A ring written at the todo's creation instant: created still comes first.
  await w.pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at)
     VALUES ($1, $2, $3, $4, 'todo', 'inbox', $5)`,
    [w.endpointId, newId('rg'), w.a.sessionId, todo.id, todo.created_at],
  );
  await claim(w.deps, w.a, { id: todo.id });
  await askHuman(w.deps, w.a, { id: todo.id, question: 'Merge now?', choices: ['merge', 'hold'] });
  await answerTodo(w.deps, w.endpointId, todo.id, { id: 'hu_x', email: 'boss@example.test' }, { choice: 1 });
  await claim(w.deps, w.a, { id: todo.id });
  await askHuman(w.deps, w.a, { id: todo.id, question: 'Still hold?' });
  await w.pool.query(`UPDATE todo_asks SET expires_at = now() - interval '1 second' WHERE todo_id = $1`, [todo.id]);
  await timeOutAsks(w.pool, { limit: 100, priority: 100 });
  await claim(w.deps, w.b, { id: todo.id });
  await complete(w.deps, w.b, { id: todo.id, result: { merged: true } });

  const timeline = await todoTimeline(w.pool, w.endpointId, todo.id);
  assert.ok(timeline);
  assert.equal(timeline.truncated, false);
  const steps = timeline.entries.map((e) => [e.kind, e.who.type, e.who.ref, e.detail]);
  const [a, b] = [w.a.sessionId, w.b.sessionId];
  assert.deepEqual(steps, [
    ['created', 'human', email, null],
    ['rung', 'session', a, `heard (claimed by ${a})`],
    ['claimed', 'session', a, 'attempt 1'],
    ['asked', 'session', a, 'Merge now?'],
    ['answered', 'human', 'boss@example.test', 'hold'],
    ['claimed', 'session', a, 'attempt 2'],
    ['asked', 'session', a, 'Still hold?'],
    ['timed_out', 'server', null, 'nobody answered in time'],
    ['claimed', 'session', b, 'attempt 3'],
    ['done', 'session', b, null],
  ]);
  const times = timeline.entries.map((e) => e.at.getTime());
  assert.deepEqual(
    times,
    [...times].sort((x, y) => x - y),
    'oldest first',
  );

  const other = await world('timeline-other');
  assert.equal(await todoTimeline(w.pool, other.endpointId, todo.id), null, "another endpoint's todo has none");
});

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const origin = (o: Partial<TimelineSources['origin']> = {}): TimelineSources['origin'] => ({
  created_at: at(0),
  state: 'pending',
  source: null,
  schedule_id: null,
  event_id: null,
  completed_at: null,
  human: null,
  endpoint: null,
  own_endpoint: 'reviewer-def',
  ...o,
});
const none = { rings: [], attempts: [], asks: [], children: [], reply: null };

test("steps of one instant keep their order; hand-offs (by the todo's own endpoint), the reply and a cancel fall in by time; a hand-off names the sender", () => {
  const t = assembleTimeline({
    ...none,
    origin: origin({ endpoint: 'planner-abc', state: 'canceled', completed_at: at(9) }),
    // Newest first, as the store reads them; the claim acked the ring in its own instant.
    attempts: [
      { seq: 2, session_id: 's2', claimed_at: at(8), ended_at: at(9), outcome: 'canceled' },
      { seq: 1, session_id: 's1', claimed_at: at(2), ended_at: at(4), outcome: 'completed' },
    ],
    rings: [
      {
        id: 'rg_1',
        session_id: 's1',
        sent_at: at(2),
        acked_at: at(2),
        ack_via: 'claim',
        acked_session_id: 's1',
        unheard_at: null,
      },
    ],
    children: [{ id: 'td_child', endpoint: 'coder-xyz', queue: 'inbox', reply: true, created_at: at(3) }],
    reply: {
      endpoint: 'planner-abc',
      state: 'done',
      created_at: at(4),
      delivered_at: at(5),
      delivered_as: 'todo',
      delivered_ref: 'td_reply',
    },
  });
  assert.deepEqual(
    t.entries.map((e) => [e.kind, e.who.ref]),
    [
      ['created', 'planner-abc'],
      ['rung', 's1'],
      ['claimed', 's1'],
      ['handed_off', 'reviewer-def'],
      ['done', 's1'],
      ['replied', 'planner-abc'],
      ['claimed', 's2'],
      ['canceled', null],
    ],
  );
  assert.equal(t.entries[3]?.todo_id, 'td_child');
  assert.equal(t.entries[3]?.detail, 'td_child to coder-xyz/inbox, reply asked');
  assert.equal(t.entries[5]?.todo_id, 'td_reply');
  assert.equal(t.entries[0]?.who.type, 'endpoint');
});

test('a schedule, a webhook and a person each show as the creator', () => {
  const first = (o: Partial<TimelineSources['origin']>) => assembleTimeline({ ...none, origin: origin(o) }).entries[0];
  assert.deepEqual(first({ schedule_id: 'sc_1', source: 'schedule' })?.who, { type: 'schedule', ref: 'sc_1' });
  assert.deepEqual(first({ event_id: 'ev_1', source: 'webhook' })?.who, { type: 'webhook', ref: 'ev_1' });
  assert.deepEqual(first({ human: 'me@example.test', source: 'board' })?.who, {
    type: 'human',
    ref: 'me@example.test',
  });
});

test('a history longer than the limit keeps the newest entries and says it was cut', () => {
  const attempts = Array.from({ length: 5 }, (_, i) => ({
    seq: 5 - i,
    session_id: `s${5 - i}`,
    claimed_at: at(2 * (5 - i)),
    ended_at: at(2 * (5 - i) + 1),
    outcome: 'released',
  }));
  const t = assembleTimeline({ ...none, origin: origin(), attempts }, 4);
  assert.equal(t.truncated, true);
  assert.deepEqual(
    t.entries.map((e) => [e.kind, e.who.ref]),
    [
      ['claimed', 's4'],
      ['released', 's4'],
      ['claimed', 's5'],
      ['released', 's5'],
    ],
  );
  assert.equal(assembleTimeline({ ...none, origin: origin(), attempts }, 11).truncated, false);
});
