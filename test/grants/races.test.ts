// Pins the grant races on a real instance with real concurrent connections, released
// together by a barrier: an approve racing a revoke always ends revoked (whichever commits
// first, the other is told), and hand-offs racing a revoke either land whole before it or
// answer not_found after it — never a todo without its link, never one after the revoke.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { barrier } from '../helpers/fixtures.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { call } from '../mcp/harness.js';
import { endpointOf, grant, person, rest, session } from './world.js';

const { pool, url } = await testDatabase('grants_races');
const server = await startTestServer(url, 'races', { SWITCHBOARD_DB_POOL_SIZE: '8' });
const base = server.url;

const alice = await person(pool);
const bob = await person(pool);

test('an approve racing a revoke ends revoked, and the loser is told', async () => {
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review']);
  const c = await session(base, coder);
  const outcomes = new Set<string>();
  for (let round = 0; round < 8; round++) {
    const g = await grant(base, alice, coder, reviewer, ['review']);
    const go = barrier(2);
    const [approve, revoke] = await Promise.all([
      go().then(() => rest(base, bob, 'POST', `/api/v1/grants/${g.id}/approve`)),
      go().then(() => rest(base, alice, 'DELETE', `/api/v1/grants/${g.id}`)),
    ]);
    assert.equal(revoke.status, 200, JSON.stringify(revoke.json));
    assert.ok([200, 409].includes(approve.status), JSON.stringify(approve.json));
    outcomes.add(approve.status === 200 ? 'approved first' : 'revoked first');
    const shown = await rest(base, bob, 'GET', `/api/v1/grants/${g.id}`);
    assert.equal(shown.json.grant.state, 'revoked');
    const actions = (shown.json.audit as { action: string }[]).map((a) => a.action);
    assert.deepEqual(actions, approve.status === 200 ? ['request', 'approve', 'revoke'] : ['request', 'revoke']);
    const after = await call(c, 'create_todo', { endpoint: reviewer.slug, queue: 'review', title: 'late' });
    assert.equal(after.error?.code, 'not_found');
  }
  assert.ok(outcomes.size >= 1);
});

test('hand-offs racing a revoke land whole before it or not at all after it', async () => {
  const coder = await endpointOf(pool, alice, 'coder', ['code']);
  const reviewer = await endpointOf(pool, bob, 'reviewer', ['review']);
  const sessions = [await session(base, coder), await session(base, coder)];
  const parent = (await call(sessions[0]!, 'create_todo', { queue: 'code', title: 'parent' })).todo.id as string;
  for (let round = 0; round < 6; round++) {
    const g = await grant(base, alice, coder, reviewer, ['review']);
    await rest(base, bob, 'POST', `/api/v1/grants/${g.id}/approve`);
    const go = barrier(3);
    const handoff = (s: (typeof sessions)[number], i: number) =>
      go().then(() =>
        call(s, 'create_todo', {
          endpoint: reviewer.slug,
          queue: 'review',
          title: `r${round}-${i}`,
          parent_id: parent,
        }),
      );
    const [one, two, revoke] = await Promise.all([
      handoff(sessions[0]!, 1),
      handoff(sessions[1]!, 2),
      go().then(() => rest(base, bob, 'DELETE', `/api/v1/grants/${g.id}`)),
    ]);
    assert.equal(revoke.status, 200);
    const landed = [one, two].filter((r) => !r.isError);
    for (const r of [one, two]) if (r.isError) assert.equal(r.error.code, 'not_found', JSON.stringify(r));
    const made = await pool.query<{ id: string; linked: boolean }>(
      `SELECT t.id, EXISTS (SELECT 1 FROM todo_links l WHERE l.child_endpoint_id = t.endpoint_id AND l.child_id = t.id) AS linked
         FROM todos t WHERE t.endpoint_id = $1 AND t.title LIKE $2`,
      [reviewer.id, `r${round}-%`],
    );
    assert.deepEqual(made.rows.map((r) => r.id).sort(), landed.map((r) => r.todo.id as string).sort());
    assert.ok(
      made.rows.every((r) => r.linked),
      'every handed todo has its link',
    );
    // After the revoke answered, nothing more lands.
    const late = await call(sessions[0]!, 'create_todo', { endpoint: reviewer.slug, queue: 'review', title: 'late' });
    assert.equal(late.error?.code, 'not_found');
  }
});
