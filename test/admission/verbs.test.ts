// Pins the admission verbs over the SDK's real client (docs/design/admission.md, "Wire
// shapes"): admission_status on the drain grant, set/clear_admission_policy only with
// their own family (not in the basics), audited with the acting endpoint; the claim
// answers carry headroom and the deferred shapes; bad policies name their field.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { basicVerbs } from '../../src/domain/verbs.js';
import { testDatabase } from '../helpers/db.js';
import { connect, fails, ok, startApp, vend } from '../mcp/harness.js';

const { pool } = await testDatabase('admission_verbs');
const { url } = await startApp(pool, 'instance-admission-verbs');
const window = { period: 'week', tz: 'Australia/Lord_Howe', start: '09:00', weekday: 'Mon' };

test('the admission family is not in the basics, and tools/list shows it only when granted', async () => {
  assert.equal(basicVerbs().includes('set_admission_policy'), false);
  assert.ok(basicVerbs().includes('admission_status'));
  const basic = await connect(url, (await vend(pool)).credential);
  const names = (await basic.client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes('admission_status'));
  assert.equal(names.includes('set_admission_policy') || names.includes('clear_admission_policy'), false);
  await fails(basic, 'set_admission_policy', { queue: 'inbox', policy: { max_in_flight: 1 } }, 'forbidden');
  const rows = await pool.query(`SELECT count(*)::int AS n FROM admission_policies`);
  assert.equal(rows.rows[0].n, 0, 'a refused verb writes nothing');
  const claimOnly = await connect(url, (await vend(pool, { verbs: ['claim_next', 'complete'] })).credential);
  const claimTools = (await claimOnly.client.listTools()).tools.map((t) => t.name);
  assert.ok(claimTools.includes('admission_status'), 'admission_status comes with claim_next');
  await ok(claimOnly, 'admission_status', {});
  const granted = await connect(url, (await vend(pool, { verbs: ['drain', 'admission'] })).credential);
  const all = (await granted.client.listTools()).tools.map((t) => t.name);
  assert.ok(all.includes('set_admission_policy') && all.includes('clear_admission_policy'));
});

test('an agent sets, reads and clears its own budget, audited with its endpoint', async () => {
  const v = await vend(pool, { verbs: ['drain', 'create', 'admission'], queues: ['inbox', 'other'] });
  const c = await connect(url, v.credential);
  const set = await ok(c, 'set_admission_policy', {
    queue: 'inbox',
    policy: { max_in_flight: 2, max_claims_per_window: 1, window },
  });
  assert.equal(set.created, true);
  assert.deepEqual(set.policy.window, window);
  await ok(c, 'create_todo', { queue: 'inbox', title: 'one' });
  await ok(c, 'create_todo', { queue: 'inbox', title: 'two' });
  const claimed = await ok(c, 'claim_next', {});
  assert.deepEqual(Object.keys(claimed).sort(), ['admission', 'answers', 'lease_token', 'prior_attempts', 'todo']);
  assert.deepEqual([claimed.admission.used, claimed.admission.remaining, claimed.admission.in_flight], [1, 0, 1]);
  const empty = await ok(c, 'claim_next', {});
  assert.equal(empty.empty, true);
  assert.deepEqual(Object.keys(empty.deferred[0]).sort(), ['exact', 'next_eligible_at', 'pending', 'queue', 'reason']);
  const listed = await ok(c, 'list_todos', { state: 'pending' });
  assert.equal(listed.todos[0].admission.state, 'deferred');
  const refused = await fails(c, 'claim', { id: listed.todos[0].id }, 'deferred');
  assert.equal(refused.error.next_eligible_at, claimed.admission.window_resets_at);
  const status = await ok(c, 'admission_status', {});
  assert.deepEqual(
    (status.queues as Array<{ queue: string; status: { reason: string }; pending: number }>).map((q) => [
      q.queue,
      q.status.reason,
      q.pending,
    ]),
    [['inbox', 'window_exhausted', 1]],
  );
  await fails(c, 'admission_status', { queue: 'elsewhere' }, 'forbidden', 'queue');
  const cleared = await ok(c, 'clear_admission_policy', { queue: 'inbox' });
  assert.deepEqual(cleared, { queue: 'inbox', deleted: true });
  const after = await ok(c, 'claim_next', {});
  assert.equal(after.admission, undefined);
  const audit = await pool.query(
    `SELECT action, actor_human_id, actor_endpoint_id FROM admission_policy_audit WHERE endpoint_id = $1 ORDER BY id`,
    [v.endpoint.id],
  );
  assert.deepEqual(audit.rows, [
    { action: 'create', actor_human_id: v.humanId, actor_endpoint_id: v.endpoint.id },
    { action: 'delete', actor_human_id: v.humanId, actor_endpoint_id: v.endpoint.id },
  ]);
});

test('a bad policy or queue is refused naming its field, and an ungranted queue is forbidden', async () => {
  const v = await vend(pool, { verbs: ['drain', 'admission'] });
  const c = await connect(url, v.credential);
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ queue: 'inbox', policy: { max_in_flight: -2 } }, 'invalid_argument', 'policy.max_in_flight'],
    [{ queue: 'inbox', policy: { max_claims_per_window: 3 } }, 'invalid_argument', 'policy.window'],
    [
      { queue: 'inbox', policy: { max_claims_per_window: 3, window: { ...window, tz: 'Nowhere/Land' } } },
      'invalid_argument',
      'policy.window.tz',
    ],
    [{ queue: 'inbox', policy: 'lots' }, 'invalid_argument', 'policy'],
    [{ queue: 'inbox' }, 'invalid_argument', 'policy'],
    [{ queue: 'elsewhere', policy: { max_in_flight: 1 } }, 'forbidden', 'queue'],
  ];
  for (const [args, code, field] of cases) await fails(c, 'set_admission_policy', args, code, field);
  await fails(c, 'clear_admission_policy', { queue: 'inbox' }, 'not_found');
});
