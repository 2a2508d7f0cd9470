// Pins hand-offs (docs/design/handoff.md) end to end on a real instance, agents on the
// SDK's MCP client: planner → coder (one owner, active at once) → reviewer (another owner:
// requested, approved); lineage both ways; the reviewer's result reaches the planner's live
// session as a message, and as a todo on its queue when no session of it is live; revoke
// stops the next hand-off; a denied, missing or unknown grant is one not_found; a loop of
// hand-offs stops at SWITCHBOARD_HANDOFF_DEPTH_MAX; grant decisions are audited on both sides.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { fails, ok, type Connected } from '../mcp/harness.js';
import { endpointOf, grant, nextMessage, person, rest, session } from './world.js';

const { pool, url } = await testDatabase('grants_handoff');
const server = await startTestServer(url, 'handoff', { SWITCHBOARD_HANDOFF_DEPTH_MAX: '3' });
const base = server.url;

const alice = await person(pool);
const bob = await person(pool);

/** Claims the todo by id and completes it with this result and summary. */
async function finish(c: Connected, id: string, result: unknown, summary: string): Promise<void> {
  await ok(c, 'claim', { id });
  await ok(c, 'complete', { id, result, summary });
}

test('planner → coder → reviewer across two owners: request, approve, hand off with lineage, and the result comes back as messages', async () => {
  const planner = await endpointOf(pool, alice, 'planner', ['plans']);
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review']);

  // One owner: active at once. Across owners: requested until the target's owner decides.
  const toCoder = await grant(base, alice, planner, coder, ['code']);
  assert.equal(toCoder.state, 'active');
  const toReviewer = await grant(base, alice, coder, reviewer, ['review']);
  assert.deepEqual(
    { from: toReviewer.from, to: toReviewer.to, queues: toReviewer.queues, state: toReviewer.state },
    { from: coder.slug, to: reviewer.slug, queues: ['review'], state: 'requested' },
  );
  assert.match(toReviewer.id, /^gr_/);

  const p = await session(base, planner);
  const c = await session(base, coder);
  const r = await session(base, reviewer);

  // Requested is not granted: the hand-off answers not_found, naming the field.
  await fails(c, 'create_todo', { endpoint: reviewer.slug, queue: 'review', title: 'early' }, 'not_found', 'endpoint');
  // Only the target's owner decides.
  assert.equal((await rest(base, alice, 'POST', `/api/v1/grants/${toReviewer.id}/approve`)).status, 403);
  const approved = await rest(base, bob, 'POST', `/api/v1/grants/${toReviewer.id}/approve`);
  assert.equal(approved.status, 200, JSON.stringify(approved.json));
  assert.equal(approved.json.grant.state, 'active');
  assert.equal((await rest(base, bob, 'POST', `/api/v1/grants/${toReviewer.id}/approve`)).status, 409);

  // Both owners list it and read the same history.
  for (const who of [alice, bob]) {
    const listed = await rest(base, who, 'GET', '/api/v1/grants');
    const ids = (listed.json.grants as { id: string }[]).map((g) => g.id);
    assert.ok(ids.includes(toReviewer.id));
    const shown = await rest(base, who, 'GET', `/api/v1/grants/${toReviewer.id}`);
    assert.deepEqual(
      (shown.json.audit as { action: string; actor_human_id: string }[]).map((a) => [a.action, a.actor_human_id]),
      [
        ['request', alice.id],
        ['approve', bob.id],
      ],
    );
  }

  // The planner's own todo, then the chain.
  const plan = (await ok(p, 'create_todo', { queue: 'plans', title: 'ship the feature' })).todo;
  await ok(p, 'claim', { id: plan.id });
  const code = (
    await ok(p, 'create_todo', {
      endpoint: coder.slug,
      queue: 'code',
      title: 'write it',
      parent_id: plan.id,
      reply: true,
    })
  ).todo;
  assert.equal(code.queue, 'code');
  assert.equal(code.source, planner.slug, 'a handed todo names its sender as source');
  await ok(c, 'claim', { id: code.id });
  const review = (
    await ok(c, 'create_todo', {
      endpoint: reviewer.slug,
      queue: 'review',
      title: 'review it',
      parent_id: code.id,
      reply: true,
    })
  ).todo;

  // Lineage both ways, on MCP and REST.
  const seenByReviewer = await ok(r, 'get_todo', { id: review.id });
  assert.deepEqual(seenByReviewer.links, {
    parent: { id: code.id, endpoint: coder.slug, depth: 2, reply: true },
    children: [],
  });
  const seenByCoder = await ok(c, 'get_todo', { id: code.id });
  assert.deepEqual(seenByCoder.links.parent, { id: plan.id, endpoint: planner.slug, depth: 1, reply: true });
  assert.deepEqual(
    (seenByCoder.links.children as { id: string; endpoint: string; state: string }[]).map((k) => [
      k.id,
      k.endpoint,
      k.state,
    ]),
    [[review.id, reviewer.slug, 'pending']],
  );
  const shown = await rest(base, alice, 'GET', `/api/v1/todos/${plan.id}`);
  assert.deepEqual(
    (shown.json.links.children as { id: string }[]).map((k) => k.id),
    [code.id],
  );

  // The reviewer's result reaches the coder's live session, which passes it up in its own result.
  await finish(r, review.id, { approved: true, notes: 'ship it' }, 'looks good');
  const toCoderMsg = await nextMessage(c);
  assert.equal(toCoderMsg.queued_by, 'server');
  assert.match(toCoderMsg.content, new RegExp(`${review.id}.*ended done`));
  assert.match(toCoderMsg.content, /Summary: looks good/);
  assert.match(toCoderMsg.content, /"approved":true/);
  await ok(c, 'complete', {
    id: code.id,
    result: { review: { approved: true, notes: 'ship it' } },
    summary: 'coded and reviewed',
  });
  const toPlanner = await nextMessage(p);
  assert.match(toPlanner.content, new RegExp(`${code.id}.*ended done`));
  assert.match(toPlanner.content, new RegExp(`Parent: ${plan.id}`));
  assert.match(toPlanner.content, /"notes":"ship it"/, "the reviewer's result reached the planner");
});

test('with no live session of the sender, the outcome comes back as a todo on the parent’s queue', async () => {
  const planner = await endpointOf(pool, alice, 'planner', ['plans']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review']);
  const g = await grant(base, alice, planner, reviewer, ['review']);
  assert.equal((await rest(base, bob, 'POST', `/api/v1/grants/${g.id}/approve`)).status, 200);
  const p = await session(base, planner);
  const r = await session(base, reviewer);
  const plan = (await ok(p, 'create_todo', { queue: 'plans', title: 'plan' })).todo;
  const review = (
    await ok(p, 'create_todo', {
      endpoint: reviewer.slug,
      queue: 'review',
      title: 'review',
      parent_id: plan.id,
      reply: true,
    })
  ).todo;
  // The planner goes away: its session ends.
  await p.transport.terminateSession();
  await until(
    async () =>
      (await pool.query(`SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL`, [planner.id]))
        .rowCount === 0,
    'the planner session closed',
  );
  await finish(r, review.id, { approved: false }, 'needs work');
  let reply:
    { id: string; queue: string; kind: string; payload: { handoff_reply: Record<string, unknown> } } | undefined;
  await until(async () => {
    const rows = await pool.query(
      `SELECT id, queue, kind, payload FROM todos WHERE endpoint_id = $1 AND kind = 'handoff_reply'`,
      [planner.id],
    );
    reply = rows.rows[0];
    return reply !== undefined;
  }, 'the reply todo');
  assert.equal(reply!.queue, 'plans');
  assert.deepEqual(
    {
      child: reply!.payload.handoff_reply.child_id,
      state: reply!.payload.handoff_reply.state,
      result: reply!.payload.handoff_reply.result,
      summary: reply!.payload.handoff_reply.summary,
    },
    { child: review.id, state: 'done', result: { approved: false }, summary: 'needs work' },
  );
  // The planner's next session finds it as work.
  const again = await session(base, planner);
  const claimed = await ok(again, 'claim_next', { queue: 'plans' });
  assert.ok([plan.id, reply!.id].includes(claimed.todo.id));
});

test('a canceled child replies too, once', async () => {
  const planner = await endpointOf(pool, alice, 'planner', ['plans']);
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  await grant(base, alice, planner, coder, ['code']);
  const p = await session(base, planner);
  const child = (await ok(p, 'create_todo', { endpoint: coder.slug, queue: 'code', title: 'maybe', reply: true })).todo;
  assert.equal((await rest(base, alice, 'POST', `/api/v1/todos/${child.id}/cancel`)).status, 200);
  const msg = await nextMessage(p);
  assert.match(msg.content, new RegExp(`${child.id}.*ended canceled`));
  const rows = await pool.query(`SELECT delivered_as FROM handoff_replies WHERE child_id = $1`, [child.id]);
  assert.deepEqual(rows.rows, [{ delivered_as: 'message' }]);
});

test('revoke stops the next hand-off at once; todos already handed stay', async () => {
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review']);
  const g = await grant(base, alice, coder, reviewer, ['review']);
  await rest(base, bob, 'POST', `/api/v1/grants/${g.id}/approve`);
  const c = await session(base, coder);
  const first = (await ok(c, 'create_todo', { endpoint: reviewer.slug, queue: 'review', title: 'one' })).todo;
  // The target's owner revokes.
  const revoked = await rest(base, bob, 'DELETE', `/api/v1/grants/${g.id}`);
  assert.equal(revoked.status, 200);
  assert.equal(revoked.json.grant.state, 'revoked');
  await fails(c, 'create_todo', { endpoint: reviewer.slug, queue: 'review', title: 'two' }, 'not_found', 'endpoint');
  const kept = await pool.query(`SELECT state FROM todos WHERE id = $1`, [first.id]);
  assert.deepEqual(kept.rows, [{ state: 'pending' }]);
  assert.equal((await rest(base, alice, 'DELETE', `/api/v1/grants/${g.id}`)).status, 409);
});

test('a denied grant, a missing one, an unknown endpoint and an uncovered queue answer the same not_found', async () => {
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review', 'other']);
  const stranger = await endpointOf(pool, bob, 'stranger', ['review']);
  const g = await grant(base, alice, coder, reviewer, ['review']);
  const denied = await rest(base, bob, 'POST', `/api/v1/grants/${g.id}/deny`);
  assert.equal(denied.json.grant.state, 'denied');
  const c = await session(base, coder);
  const message = async (slug: string, queue = 'review'): Promise<string> => {
    const refused = await fails(c, 'create_todo', { endpoint: slug, queue, title: 'x' }, 'not_found', 'endpoint');
    return String(refused.error.message).replace(slug, 'SLUG');
  };
  const answers = [await message(reviewer.slug), await message(stranger.slug), await message('no-such-endpoint-zz')];
  assert.equal(new Set(answers).size, 1, answers.join(' | '));
  // Re-granted (a denied grant is not live), but not for the queue asked.
  const again = await grant(base, alice, coder, reviewer, ['review']);
  await rest(base, bob, 'POST', `/api/v1/grants/${again.id}/approve`);
  assert.equal(await message(reviewer.slug, 'other'), answers[0]);
  // A foreign grant id is not found either.
  const outsider = await person(pool);
  assert.equal((await rest(base, outsider, 'POST', `/api/v1/grants/${again.id}/approve`)).status, 404);
  assert.equal((await rest(base, outsider, 'GET', `/api/v1/grants/${again.id}`)).status, 404);
  // The request side: a from that is not yours is not_found, like an unknown one.
  assert.equal(
    (await rest(base, bob, 'POST', '/api/v1/grants', { from: coder.slug, to: reviewer.slug, queues: ['review'] }))
      .status,
    404,
  );
});

test('a loop of hand-offs stops at the depth limit', async () => {
  const a = await endpointOf(pool, alice, 'ping', ['work']);
  const b = await endpointOf(pool, alice, 'pong', ['work']);
  await grant(base, alice, a, b, ['work']);
  await grant(base, alice, b, a, ['work']);
  const sa = await session(base, a);
  const sb = await session(base, b);
  let parent = (await ok(sa, 'create_todo', { queue: 'work', title: 'start' })).todo.id as string;
  const hop = async (from: Connected, to: string) =>
    (await ok(from, 'create_todo', { endpoint: to, queue: 'work', title: 'again', parent_id: parent })).todo
      .id as string;
  parent = await hop(sa, b.slug); // depth 1
  parent = await hop(sb, a.slug); // depth 2
  parent = await hop(sa, b.slug); // depth 3, the limit
  const refused = await fails(
    sb,
    'create_todo',
    { endpoint: a.slug, queue: 'work', title: 'again', parent_id: parent },
    'failed_precondition',
    'parent_id',
  );
  assert.match(refused.error.message, /SWITCHBOARD_HANDOFF_DEPTH_MAX/);
  const onA = await pool.query(`SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1`, [a.id]);
  assert.equal(onA.rows[0].n, 2, 'the refused hand-off wrote nothing');
});

test('a grant within one owner names queues of the target; a grant to itself or a duplicate is refused', async () => {
  const a = await endpointOf(pool, alice, 'one', ['work']);
  const b = await endpointOf(pool, alice, 'two', ['work']);
  const bad = await rest(base, alice, 'POST', '/api/v1/grants', { from: a.slug, to: b.slug, queues: ['nope'] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.details.field, 'queues');
  const self = await rest(base, alice, 'POST', '/api/v1/grants', { from: a.slug, to: a.slug, queues: ['work'] });
  assert.equal(self.status, 400);
  await grant(base, alice, a, b, ['work']);
  const twice = await rest(base, alice, 'POST', '/api/v1/grants', { from: a.slug, to: b.slug, queues: ['work'] });
  assert.equal(twice.status, 409);
});
